package controlplane

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/certgen"
)

// writeCerts writes a CA and a daemon certificate into dir.
func writeCerts(t *testing.T, dir string, ca *certgen.Authority) *RemoteConfig {
	t.Helper()
	srv, err := ca.Issue(certgen.Spec{CommonName: "daemon", Server: true, Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	rc := &RemoteConfig{CertFile: filepath.Join(dir, "s.pem"), KeyFile: filepath.Join(dir, "s.key"), ClientCAFile: filepath.Join(dir, "ca.pem"),
		Allow: map[string]Role{"reader": RoleRead}}
	for path, b := range map[string][]byte{rc.CertFile: certgen.CertPEM(srv.Cert), rc.KeyFile: certgen.KeyPEM(srv.Key), rc.ClientCAFile: certgen.CertPEM(ca.Cert)} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return rc
}

func newTestTLS(rc *RemoteConfig) (*tlsServer, error) {
	allow, err := parseAllow(rc.Allow)
	if err != nil {
		return nil, err
	}
	return newTLSServer(rc, allow)
}

// TestReload: reload swaps the daemon's certificate and client CAs at once; files
// that do not load leave both as they were.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	ca1, _ := certgen.NewCA("ca1", time.Hour)
	rc := writeCerts(t, dir, ca1)
	ts, err := newTestTLS(rc)
	if err != nil {
		t.Fatal(err)
	}
	client := func(ca *certgen.Authority) []*x509.Certificate {
		c, err := ca.Issue(certgen.Spec{CommonName: "reader"})
		if err != nil {
			t.Fatal(err)
		}
		return []*x509.Certificate{c.Cert}
	}
	first := ts.cur.Load()
	if _, err := ts.verify(client(ca1)); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(rc.ClientCAFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ts.reload(); !errors.Is(err, ErrCertificate) {
		t.Fatalf("reload of a broken CA file: %v", err)
	}
	if ts.cur.Load() != first {
		t.Fatal("a failed reload replaced the certificates")
	}

	ca2, _ := certgen.NewCA("ca2", time.Hour)
	writeCerts(t, dir, ca2)
	if err := ts.reload(); err != nil {
		t.Fatal(err)
	}
	if got := ts.cur.Load().cert.Leaf; got.Equal(first.cert.Leaf) || got.CheckSignatureFrom(ca2.Cert) != nil {
		t.Fatal("reload did not load the new daemon certificate")
	}
	if _, err := ts.verify(client(ca2)); err != nil {
		t.Fatalf("a client of the new CA: %v", err)
	}
	var re *refusedError
	if _, err := ts.verify(client(ca1)); !errors.As(err, &re) || !strings.Contains(re.Reason, "does not verify") {
		t.Fatalf("a client of the old CA after the reload: %v", err)
	}
}

// TestVerify: each refusal names the client and says why, by the daemon's clock.
func TestVerify(t *testing.T) {
	ca, _ := certgen.NewCA("ca", time.Hour)
	ts, err := newTestTLS(writeCerts(t, t.TempDir(), ca))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(certgen.Spec{CommonName: "reader", Valid: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	stranger, _ := ca.Issue(certgen.Spec{CommonName: "stranger"})
	// Two common names: crypto/x509 reads the last ("reader"), a CA may have vetted
	// the first.
	twoCN, _ := ca.Issue(certgen.Spec{ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "someone"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "reader"}}})
	// A common name that spells the allowed pin of another key.
	pinned, _ := ca.Issue(certgen.Spec{CommonName: "pinned"})
	pinCN, _ := ca.Issue(certgen.Spec{CommonName: SPKIPin(pinned.Cert)})
	ts.allow.pin[sha256.Sum256(pinned.Cert.RawSubjectPublicKeyInfo)] = RoleCall
	tests := []struct {
		name  string
		chain []*x509.Certificate
		now   time.Time
		want  string // "" for accepted
	}{
		{"accepted", []*x509.Certificate{c.Cert}, time.Now(), ""},
		{"no certificate", nil, time.Now(), "no client certificate"},
		{"expired", []*x509.Certificate{c.Cert}, c.Cert.NotAfter.Add(time.Second), `unverified certificate claiming CN="reader"`},
		{"two common names", []*x509.Certificate{twoCN.Cert}, time.Now(), "certificate has 2 common names"},
		{"common name spelling a pin", []*x509.Certificate{pinCN.Cert}, time.Now(), "no --allow entry names it"},
		{"not yet valid", []*x509.Certificate{c.Cert}, c.Cert.NotBefore.Add(-time.Second), "not valid before"},
		{"not allowed", []*x509.Certificate{stranger.Cert}, time.Now(), "no --allow entry names it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts.now = func() time.Time { return tc.now }
			p, err := ts.verify(tc.chain)
			if tc.want == "" {
				if err != nil || p.role != RoleRead || !strings.Contains(p.identity, `CN="reader"`) {
					t.Fatalf("verify: %+v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPermsAllows: what each role may call (R: the issue's role table).
func TestPermsAllows(t *testing.T) {
	for _, tc := range []struct {
		p      perms
		method string
		ok     bool
	}{
		{ownerPerms, methodSend, true},
		{perms{role: RoleRead}, methodSend, false},
		{perms{role: RoleCall}, methodSend, true},
		{perms{role: RoleRead}, methodPing, true},
		{perms{role: RoleRead}, methodVersion, true},
		{perms{role: RoleRead}, methodCapabilities, true},
		{perms{role: RoleRead}, methodDiscover, true},
		{perms{role: RoleRead}, methodStatus, true},
		{perms{role: RoleRead}, methodUpgrade, false}, // it starts processes
		{perms{role: RoleCall}, methodUpgrade, true},
		{perms{role: RoleLogs}, methodStatus, true},
		{perms{role: RoleLogs}, methodSend, false},
		{perms{role: RoleLogs}, methodUpgrade, false},
		{perms{role: RoleRead}, "Unknown", true}, // answered unknown_method
		{perms{}, methodPing, false},             // no role: nothing
	} {
		if got := tc.p.allows(tc.method); got != tc.ok {
			t.Errorf("%+v allows %s = %v", tc.p, tc.method, got)
		}
	}
}
