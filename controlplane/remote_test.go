package controlplane

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/certgen"
)

// TestRemoteRoles: a call client may Send; a read client gets permission_denied on
// Send and its connection stays usable; the socket's owner keeps every permission.
func TestRemoteRoles(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, nil)
	ctx := testCtx(t)

	caller := dialRemote(t, d.addr, p.client(t, "caller"))
	res, err := caller.Send(ctx, echoSend)
	if err != nil {
		t.Fatalf("call client Send: %v", err)
	}
	if string(res.Value) != `{"a":1}` {
		t.Errorf("Send value %s", res.Value)
	}

	reader := dialRemote(t, d.addr, p.client(t, "reader"))
	for range 2 { // denied twice: the connection stays usable after a denial
		_, err = reader.Send(ctx, echoSend)
		e := wantCode(t, err, CodePermissionDenied)
		if CodeOf(err) != CodePermissionDenied || !strings.Contains(e.Message, "read") {
			t.Errorf("denial %v", e)
		}
		if _, err := reader.Ping(ctx); err != nil {
			t.Fatalf("read client Ping after a denial: %v", err)
		}
	}
	for name, call := range map[string]func() error{
		"Version":      func() error { _, err := reader.Version(ctx); return err },
		"Capabilities": func() error { _, err := reader.Capabilities(ctx); return err },
		"Status":       func() error { _, err := reader.Status(ctx); return err },
		"Discover":     func() error { return reader.Discover(ctx, time.Millisecond, nil) },
	} {
		if err := call(); err != nil {
			t.Errorf("read client %s: %v", name, err)
		}
	}
	// A method outside the schema is unknown_method whatever the role.
	_, err = reader.Call(ctx, "Nope", nil, nil)
	wantCode(t, err, CodeUnknownMethod)

	if _, err := d.owner.Send(ctx, echoSend); err != nil {
		t.Fatalf("socket owner Send: %v", err)
	}
	st, err := d.owner.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Calls != 2 || st.Remote == nil || st.Remote.Listen != d.addr || st.Remote.RefusedClients != 0 {
		t.Errorf("Status: calls %d (want 2: denied Sends are not calls), remote %+v", st.Calls, st.Remote)
	}
}

// TestRemoteRefusedAtConnect: every client that may not connect is refused during
// the handshake, counted in Status and logged with its address (and its identity
// when it showed a certificate); the daemon serves on.
func TestRemoteRefusedAtConnect(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, nil)
	other, err := certgen.NewCA("other CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	withCert := func(ca *certgen.Authority, s certgen.Spec) *tls.Config {
		cert, key := p.issue(t, ca, s)
		cfg, err := ClientTLSConfig(p.caFile, cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	noCert, err := ClientTLSConfig(p.caFile, p.certFile, p.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	noCert.Certificates = nil
	now := time.Now()
	tests := []struct {
		name string
		tls  *tls.Config // nil: plain TCP
		tls2 bool        // offer TLS 1.2 only
		log  string      // in the refusal's log line
	}{
		{name: "no client certificate", tls: noCert, log: "TLS handshake failed"},
		{name: "another CA", tls: withCert(other, certgen.Spec{CommonName: "caller"}), log: `unverified certificate claiming CN=\"caller\"`},
		// A newline in an unverified common name must not start a log record of its own.
		{name: "another CA, newline in the name", tls: withCert(other, certgen.Spec{CommonName: "x\n[INFO]  forged: record"}), log: `claiming CN=\"x\n[INFO]  forged`},
		{name: "two common names", tls: withCert(p.ca, certgen.Spec{ExtraNames: []pkix.AttributeTypeAndValue{
			{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "nobody"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "caller"}}}),
			log: "certificate has 2 common names"},
		{name: "expired", tls: withCert(p.ca, certgen.Spec{CommonName: "old-caller",
			NotBefore: now.Add(-2 * time.Hour), NotAfter: now.Add(-time.Hour)}), log: `certificate expired at`},
		{name: "not yet valid", tls: withCert(p.ca, certgen.Spec{CommonName: "early-caller",
			NotBefore: now.Add(time.Hour), NotAfter: now.Add(2 * time.Hour)}), log: `certificate not valid before`},
		{name: "verified but not allowed", tls: p.client(t, "stranger"), log: `CN=\"stranger\" (spki:sha256/`},
		{name: "server certificate as client", tls: withCert(p.ca, certgen.Spec{CommonName: "caller", Server: true, Hosts: []string{"127.0.0.1"}}), log: "does not verify"},
		{name: "plain TCP", log: "TLS handshake failed"},
		{name: "TLS 1.2 only", tls: p.client(t, "caller"), tls2: true, log: "TLS handshake failed"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			nc, err := net.Dial("tcp", d.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
			var rerr error
			switch {
			case tc.tls == nil:
				// A well-formed control-plane Ping frame, in the clear.
				body := mustJSON(map[string]any{"id": newID(), "kind": "request", "method": "Ping"})
				frame := append([]byte{0, 0, 0, byte(len(body))}, body...)
				if _, err := nc.Write(frame); err != nil {
					t.Fatal(err)
				}
				if b, _ := io.ReadAll(nc); !bytes.Contains(b, []byte("response")) {
					rerr = errors.New("closed without an answer")
				}
			default:
				cfg := tc.tls.Clone()
				cfg.ServerName = "127.0.0.1"
				if tc.tls2 {
					cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
				}
				tc := tls.Client(nc, cfg)
				if rerr = tc.HandshakeContext(ctx); rerr == nil {
					// TLS 1.3: the daemon checks the client's certificate after the
					// client's side is done, and answers with an alert.
					c := newClient(tc)
					_, rerr = c.Ping(ctx)
					c.Close()
				}
			}
			if rerr == nil {
				t.Fatal("the daemon answered")
			}
			st := waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.RefusedClients == uint64(i+1) })
			if st.RefusedClients != uint64(i+1) {
				t.Errorf("RefusedClients %d, want %d", st.RefusedClients, i+1)
			}
			logs := d.log.String()
			line := logs[strings.LastIndex(logs, "remote client refused"):]
			if !strings.Contains(line, tc.log) || !strings.Contains(line, "client=127.0.0.1:") {
				t.Errorf("refusal logged as %q, want it to name the client and %q", line, tc.log)
			}
			if strings.Contains(logs, "\n[INFO]  forged") {
				t.Errorf("a client's common name split the log: %q", logs)
			}
		})
	}
	ctx := testCtx(t)
	if _, err := dialRemote(t, d.addr, p.client(t, "caller")).Send(ctx, echoSend); err != nil {
		t.Fatalf("an allowed client after the refusals: %v", err)
	}
	if st, _ := d.owner.Status(ctx); st.Clients != 2 {
		t.Errorf("Clients %d, want 2 (the refused ones hold nothing)", st.Clients)
	}
}

// TestRemoteSPKIPin: a client named by the pin of its public key is allowed with
// the pin's role, whatever its common name.
func TestRemoteSPKIPin(t *testing.T) {
	p := newPKI(t)
	c, err := p.ca.Issue(certgen.Spec{CommonName: "reader"}) // the name alone would only read
	if err != nil {
		t.Fatal(err)
	}
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.Remote.Allow[SPKIPin(c.Cert)] = RoleCall
	})
	cert := writePEM(t, p.dir, "pinned.pem", certgen.CertPEM(c.Cert))
	key := writePEM(t, p.dir, "pinned.key", certgen.KeyPEM(c.Key))
	cfg, err := ClientTLSConfig(p.caFile, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialRemote(t, d.addr, cfg).Send(testCtx(t), echoSend); err != nil {
		t.Fatalf("pinned client Send: %v", err)
	}
}

// TestRemoteCNIsNotAPin: a certificate from the client CA whose common name spells
// an allowed pin gets no role, whatever the pin's spelling in Allow; the key the
// pin names does.
func TestRemoteCNIsNotAPin(t *testing.T) {
	p := newPKI(t)
	alice, err := p.ca.Issue(certgen.Spec{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	pin := SPKIPin(alice.Cert)
	upper := "SPKI:SHA256/" + strings.TrimPrefix(pin, spkiPrefix)
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.Allow[upper] = RoleCall })
	ctx := testCtx(t)
	for _, cn := range []string{pin, upper, "cn:" + pin} {
		_, err := dialRemote(t, d.addr, p.client(t, cn)).Ping(ctx)
		if err == nil {
			t.Errorf("a certificate with common name %q was served", cn)
		}
	}
	cert := writePEM(t, p.dir, "alice.pem", certgen.CertPEM(alice.Cert))
	key := writePEM(t, p.dir, "alice.key", certgen.KeyPEM(alice.Key))
	cfg, err := ClientTLSConfig(p.caFile, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialRemote(t, d.addr, cfg).Send(ctx, echoSend); err != nil {
		t.Fatalf("the pinned key: %v", err)
	}
}

// TestRemoteReload: new certificate files take effect on Reload for new
// connections; a connected client keeps working; files that do not load leave the
// previous ones in use.
func TestRemoteReload(t *testing.T) {
	p := newPKI(t)
	reload := make(chan struct{})
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.Reload = reload })
	ctx := testCtx(t)
	connected := dialRemote(t, d.addr, p.client(t, "caller"))
	if _, err := connected.Send(ctx, echoSend); err != nil {
		t.Fatal(err)
	}
	serverCert := func(cfg *tls.Config) *x509.Certificate {
		cfg = cfg.Clone()
		cfg.ServerName = "127.0.0.1"
		tc, err := tls.Dial("tcp", d.addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		return tc.ConnectionState().PeerCertificates[0]
	}
	old := serverCert(p.client(t, "reader"))

	// Broken files: the reload fails and is logged; the old certificate stays.
	if err := os.WriteFile(p.certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	reload <- struct{}{}
	waitFor(t, func() bool { return strings.Contains(d.log.String(), "certificate reload failed") })
	if got := serverCert(p.client(t, "reader")); !got.Equal(old) {
		t.Fatal("a failed reload changed the certificate")
	}

	// A new CA, and a daemon certificate from it: a client trusting only the new CA
	// connects once the files are reloaded.
	ca2, err := certgen.NewCA("rotated CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ca2.Issue(certgen.Spec{CommonName: "daemon-2", Server: true, Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, p.dir, filepath.Base(p.keyFile), certgen.KeyPEM(c2.Key))
	writePEM(t, p.dir, filepath.Base(p.certFile), certgen.CertPEM(c2.Cert))
	writePEM(t, p.dir, filepath.Base(p.caFile), append(certgen.CertPEM(p.ca.Cert), certgen.CertPEM(ca2.Cert)...))
	reload <- struct{}{}
	st := waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.Reloads == 1 })
	if !st.Remote.CertNotAfter.Equal(c2.Cert.NotAfter.UTC()) {
		t.Errorf("Status cert_not_after %v, want the new certificate's %v", st.Remote.CertNotAfter, c2.Cert.NotAfter)
	}
	p2 := &pki{dir: p.dir, ca: ca2, caFile: writePEM(t, p.dir, "ca2.pem", certgen.CertPEM(ca2.Cert))}
	newClient := p2.client(t, "caller") // trusts only the new CA; its certificate is from it
	if got := serverCert(newClient); !got.Equal(c2.Cert) {
		t.Fatalf("new client sees certificate %q, want the rotated one", got.Subject.CommonName)
	}
	if _, err := dialRemote(t, d.addr, newClient).Send(ctx, echoSend); err != nil {
		t.Fatalf("client of the new CA: %v", err)
	}
	if _, err := connected.Send(ctx, echoSend); err != nil {
		t.Fatalf("client connected before the rotation: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition never held")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestRemoteConfig: a remote listener without certificates, or with no client
// allowed, or a malformed grant, does not start.
func TestRemoteConfig(t *testing.T) {
	p := newPKI(t)
	dir := adapterDir(t)
	good := func() *RemoteConfig {
		return &RemoteConfig{Listen: "127.0.0.1:0", CertFile: p.certFile, KeyFile: p.keyFile, ClientCAFile: p.caFile,
			Allow: map[string]Role{"x": RoleRead}}
	}
	tests := []struct {
		name string
		edit func(*RemoteConfig)
		want error
	}{
		{"no listen address", func(r *RemoteConfig) { r.Listen = "" }, ErrConfig},
		{"no client CA", func(r *RemoteConfig) { r.ClientCAFile = "" }, ErrConfig},
		{"no allow", func(r *RemoteConfig) { r.Allow = nil }, ErrConfig},
		{"unknown role", func(r *RemoteConfig) { r.Allow["x"] = "admin" }, ErrConfig},
		{"bad pin", func(r *RemoteConfig) { r.Allow["spki:sha256/abc"] = RoleRead }, ErrConfig},
		{"bare pin", func(r *RemoteConfig) {
			r.Allow["sha256/"+strings.Repeat("A", 43)+"="] = RoleRead
		}, ErrConfig},
		{"padded name", func(r *RemoteConfig) { r.Allow[" alice"] = RoleRead }, ErrConfig},
		{"one name, two roles", func(r *RemoteConfig) { r.Allow["cn:x"] = RoleCall }, ErrConfig},
		{"missing key", func(r *RemoteConfig) { r.KeyFile = filepath.Join(p.dir, "none") }, ErrCertificate},
		{"CA file without certificates", func(r *RemoteConfig) { r.ClientCAFile = p.keyFile }, ErrCertificate},
		{"address in use", nil, ErrSocket},
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := good()
			if tc.edit != nil {
				tc.edit(rc)
			} else {
				rc.Listen = busy.Addr().String()
			}
			err := Serve(testCtx(t), ServerConfig{Dirs: []string{dir}, Remote: rc})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Serve: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRemoteOwnCertExpired: a daemon whose own certificate has expired serves, but
// says so in its log (its clients refuse it).
func TestRemoteOwnCertExpired(t *testing.T) {
	p := newPKI(t)
	now := time.Now()
	p.certFile, p.keyFile = p.issue(t, p.ca, certgen.Spec{CommonName: "daemon", Server: true, Hosts: []string{"127.0.0.1"},
		NotBefore: now.Add(-2 * time.Hour), NotAfter: now.Add(-time.Hour)})
	d := startRemote(t, p, nil)
	if !strings.Contains(d.log.String(), "the daemon's certificate has expired") {
		t.Errorf("log %s", d.log.String())
	}
	if _, err := DialTLS(testCtx(t), d.addr, p.client(t, "caller")); err == nil {
		t.Error("a client accepted an expired daemon certificate")
	}
}

// TestRemoteStatusLogTail: adapter standard error is its own permission: a read
// client's Status carries no log_tail; a logs or call client's, and the socket
// owner's, carry it.
func TestRemoteStatusLogTail(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.Dirs = []string{adapterDir(t, "thermometer_v1.0.0")}
		cfg.Remote.Allow["logger"] = RoleLogs
	})
	ctx := testCtx(t)
	if _, err := d.owner.Send(ctx, SendParams{Adapter: "thermometer", Method: "example.device.read",
		Params: json.RawMessage(`{"probe":"inlet"}`)}); err != nil {
		t.Fatal(err)
	}
	// Standard error is read as it comes: wait until the owner sees the line.
	waitStatus(t, d.owner, func(st *StatusResult) bool {
		return len(st.Adapters) == 1 && strings.Contains(strings.Join(st.Adapters[0].LogTail, "\n"), "reading")
	})
	for _, tc := range []struct {
		cn   string
		tail bool
	}{{"reader", false}, {"logger", true}, {"caller", true}} {
		st, err := dialRemote(t, d.addr, p.client(t, tc.cn)).Status(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.cn, err)
		}
		if len(st.Adapters) != 1 {
			t.Fatalf("%s: adapters %+v", tc.cn, st.Adapters)
		}
		got := st.Adapters[0].LogTail
		switch {
		case !tc.tail && got != nil:
			t.Errorf("%s (read) got log_tail %q", tc.cn, got)
		case tc.tail && !strings.Contains(strings.Join(got, "\n"), "reading"):
			t.Errorf("%s got log_tail %q, want the adapter's lines", tc.cn, got)
		}
		raw, _ := json.Marshal(st.Adapters[0])
		if has := strings.Contains(string(raw), `"log_tail"`); has != tc.tail {
			t.Errorf("%s: log_tail in JSON %v, want %v: %s", tc.cn, has, tc.tail, raw)
		}
	}
}

// TestRemoteLocalReserve: remote clients may take all client slots but an eighth (at
// least one), kept for the socket: with MaxClients 16, 14 remote clients fill their
// share, a 15th is refused though a slot is free, and a socket client gets in.
func TestRemoteLocalReserve(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.MaxClients = 16 })
	ctx := testCtx(t)
	cfg := p.client(t, "reader")
	for range 14 {
		if _, err := dialRemote(t, d.addr, cfg).Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	over, err := DialTLS(ctx, d.addr, cfg)
	if err == nil {
		_, err = over.Ping(ctx)
		over.Close()
	}
	if err == nil {
		t.Fatal("a 15th remote client took a slot kept for the socket")
	}
	if !strings.Contains(d.log.String(), "too many clients (16, of which 2 are kept for the socket)") {
		t.Errorf("log %s", d.log.String())
	}
	if st, err := dial(t, d.sock).Status(ctx); err != nil || st.Clients != 16 {
		t.Fatalf("socket client: %+v, %v; want it served, 16 clients", st, err)
	}
}
