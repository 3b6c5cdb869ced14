package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
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
