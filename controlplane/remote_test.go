package controlplane

import (
	"bytes"
	"context"
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
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/certgen"
)

// pki is a test's certificates: a CA, the daemon's certificate for 127.0.0.1, and
// the files they are written to.
type pki struct {
	dir                       string
	ca                        *certgen.Authority
	caFile, certFile, keyFile string
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	var err error
	if p.ca, err = certgen.NewCA("test CA", time.Hour); err != nil {
		t.Fatal(err)
	}
	p.caFile = writePEM(t, p.dir, "ca.pem", certgen.CertPEM(p.ca.Cert))
	p.certFile, p.keyFile = p.issue(t, p.ca, certgen.Spec{CommonName: "daemon", Server: true, Hosts: []string{"127.0.0.1"}})
	return p
}

// issue writes a certificate signed by ca and its key, returning the files.
func (p *pki) issue(t testing.TB, ca *certgen.Authority, s certgen.Spec) (certFile, keyFile string) {
	t.Helper()
	c, err := ca.Issue(s)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s.CommonName) + "-" + c.Cert.SerialNumber.Text(16)[:8]
	return writePEM(t, p.dir, name+".pem", certgen.CertPEM(c.Cert)), writePEM(t, p.dir, name+".key", certgen.KeyPEM(c.Key))
}

// client returns the TLS configuration of a client with a certificate for cn from
// the test CA.
func (p *pki) client(t testing.TB, cn string) *tls.Config {
	t.Helper()
	cert, key := p.issue(t, p.ca, certgen.Spec{CommonName: cn})
	cfg, err := ClientTLSConfig(p.caFile, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func writePEM(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logBuffer collects the daemon's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// remoteDaemon is a daemon serving on a socket and on TCP (127.0.0.1, any port).
type remoteDaemon struct {
	sock, addr string
	log        *logBuffer
	owner      *Client // on the socket
}

// startRemote starts a daemon with the echo adapter, allowing "caller" to call and
// "reader" to read; edit may change the configuration.
func startRemote(t testing.TB, p *pki, edit func(*ServerConfig)) *remoteDaemon {
	t.Helper()
	d := &remoteDaemon{log: &logBuffer{}}
	addrs := make(chan net.Addr, 1)
	cfg := ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")},
		Logger: hclog.New(&hclog.LoggerOptions{Output: d.log, Level: hclog.Info}),
		Remote: &RemoteConfig{Listen: "127.0.0.1:0", CertFile: p.certFile, KeyFile: p.keyFile,
			ClientCAFile: p.caFile, Allow: map[string]Role{"caller": RoleCall, "reader": RoleRead},
			OnListen: func(a net.Addr) { addrs <- a }}}
	if edit != nil {
		edit(&cfg)
	}
	d.sock = startServer(t, cfg)
	d.addr = (<-addrs).String()
	d.owner = dial(t, d.sock)
	return d
}

func dialRemote(t testing.TB, addr string, cfg *tls.Config) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialTLS(ctx, addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var echoSend = SendParams{Adapter: "echo", Method: "example.echo.echo", Params: json.RawMessage(`{"a":1}`)}

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

// TestRemoteBounds: a client that opens TCP and never handshakes is dropped after
// the handshake bound; an idle client is closed after the idle bound, but not while
// a request of its is under way; the socket and TCP share MaxClients.
func TestRemoteBounds(t *testing.T) {
	p := newPKI(t)
	// Two daemons: a handshake bound short enough for a quick test would refuse real
	// clients on a loaded machine, so it has one without them.
	quick := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.HandshakeTimeout = 200 * time.Millisecond })
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.Remote.IdleTimeout = 2 * time.Second
		cfg.MaxClients = 3
	})
	ctx := testCtx(t)

	t.Run("no handshake", func(t *testing.T) {
		d := quick
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		if n, err := nc.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("read %d, %v: want the daemon to close the connection", n, err)
		}
		waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.RefusedClients == 1 })
		if !strings.Contains(d.log.String(), "no TLS handshake within 200ms") {
			t.Errorf("log %s", d.log.String())
		}
	})

	t.Run("idle", func(t *testing.T) {
		idle := dialRemote(t, d.addr, p.client(t, "reader"))
		if _, err := idle.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		busy := dialRemote(t, d.addr, p.client(t, "reader"))
		// A Discover longer than the idle bound: the connection is busy, not idle.
		if err := busy.Discover(ctx, 5*time.Second, nil); err != nil {
			t.Fatalf("Discover outlasting the idle bound: %v", err)
		}
		select {
		case <-idle.Done():
		case <-ctx.Done():
			t.Fatal("idle client never closed")
		}
		<-busy.Done() // idle too, once its stream ended
		waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.DroppedClients == 2 && st.Clients == 1 })
		if !strings.Contains(d.log.String(), "remote client idle; closed") {
			t.Errorf("log %s", d.log.String())
		}
	})

	t.Run("max clients shared with the socket", func(t *testing.T) {
		for range 2 { // with the owner's, three clients on the socket
			if _, err := dial(t, d.sock).Ping(ctx); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := d.owner.Status(ctx)
		// Refused once its handshake is done: the dial or the first request fails.
		over, err := DialTLS(ctx, d.addr, p.client(t, "reader"))
		if err == nil {
			_, err = over.Ping(ctx)
			over.Close()
		}
		if err == nil {
			t.Fatal("a fourth client was served with MaxClients 3")
		}
		waitStatus(t, d.owner, func(st *StatusResult) bool {
			return st.Remote.RefusedClients == before.Remote.RefusedClients+1
		})
	})
}

// TestRemoteHandshakesDoNotCrowdOut: peers that open TCP and never handshake hold
// handshake slots only: the socket's clients still get in; one more such peer than
// the slots takes the slot of the one silent longest, which is closed at once.
func TestRemoteHandshakesDoNotCrowdOut(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.MaxClients = 3
		cfg.Remote.HandshakeTimeout = time.Minute
	})
	ctx := testCtx(t)
	var peers []net.Conn
	for range 4 {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		peers = append(peers, nc)
	}
	first := peers[0]
	_ = first.SetDeadline(time.Now().Add(30 * time.Second))
	if n, err := first.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("longest-silent peer: read %d, %v; want it closed for the fourth", n, err)
	}
	waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.RefusedClients == 1 })
	if !strings.Contains(d.log.String(), "handshake slots full (3): dropped the longest-silent pending handshake") {
		t.Errorf("log %s", d.log.String())
	}
	if _, err := dial(t, d.sock).Ping(ctx); err != nil {
		t.Fatalf("socket client while handshakes are pending: %v", err)
	}
	if st, err := d.owner.Status(ctx); err != nil || st.Clients != 2 {
		t.Fatalf("status %v, %v: want 2 clients (the silent peers are not clients)", st, err)
	}
	// A real client gets a slot too (dropping the longest-silent peer), and in.
	if _, err := dialRemote(t, d.addr, p.client(t, "reader")).Ping(ctx); err != nil {
		t.Fatalf("remote client while the handshake slots are full: %v", err)
	}
}

// TestRemoteHandshakeFlood: with 300 idle unauthenticated TCP connections open
// (more than the default handshake slots), a real client still completes a Ping
// within 3 s: it takes the slot of a silent peer. The bound is generous; before,
// the client was refused outright.
func TestRemoteHandshakeFlood(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.HandshakeTimeout = time.Minute })
	for range 300 {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	cfg := p.client(t, "reader")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := DialTLS(ctx, d.addr, cfg)
	if err != nil {
		t.Fatalf("dial under a flood of silent peers: %v", err)
	}
	defer c.Close()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping under a flood of silent peers: %v", err)
	}
}

// TestRemoteGarbage: bytes that are not TLS cost a refusal and nothing more; after
// the handshake, a body that is not an envelope is answered invalid_params on a
// connection that stays usable, and an oversized frame ends only that connection.
func TestRemoteGarbage(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, nil)
	ctx := testCtx(t)
	for _, junk := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte{0xff}, 64<<10), {0x16, 0x03, 0x01, 0xff, 0xff}} {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		_, _ = nc.Write(junk)
		_, _ = io.Copy(io.Discard, nc) // until the daemon closes it
		nc.Close()
	}
	cfg := p.client(t, "caller")
	cfg.ServerName = "127.0.0.1"
	tc, err := tls.Dial("tcp", d.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	raw := &rawConn{t: t, nc: tc}
	_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
	raw.writeFrame([]byte("not json at all"))
	if env := raw.read(); env.Error == nil || env.Error.Code != CodeInvalidParams {
		t.Fatalf("garbage body answered %+v", env)
	}
	id := newID()
	raw.writeFrame(mustJSON(map[string]any{"id": id, "kind": "request", "method": "Ping"}))
	if env := raw.read(); env.ID != id || env.Error != nil {
		t.Fatalf("Ping after garbage answered %+v", env)
	}
	raw.writeHeader(1 << 30)
	if env := raw.read(); env.Error == nil || env.Error.Code != CodeFrameTooLarge {
		t.Fatalf("oversized frame answered %+v", env)
	}
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open after an oversized frame")
	}
	st := waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Clients == 1 })
	if st.Remote.RefusedClients != 3 {
		t.Errorf("refused %d, want 3 (one per garbage connection)", st.Remote.RefusedClients)
	}
	if _, err := dialRemote(t, d.addr, p.client(t, "caller")).Send(ctx, echoSend); err != nil {
		t.Fatal(err)
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
