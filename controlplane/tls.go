package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// RemoteConfig makes [Serve] answer on TCP too, with mutual TLS: TLS 1.3 only, a
// client certificate required, chaining to ClientCAFile, and named by Allow. There
// is no way to serve plain TCP. Frames, envelopes, methods and codes are those of
// the Unix socket; only who may connect, and what they may do, differ.
type RemoteConfig struct {
	// Listen is the HOST:PORT to listen on (port 0: any free port, see OnListen).
	Listen string
	// CertFile and KeyFile are the daemon's certificate chain and private key (PEM).
	CertFile, KeyFile string
	// ClientCAFile holds the PEM certificates a client certificate must chain to.
	ClientCAFile string
	// Allow maps a client certificate's identity to its role. An identity is either
	// its subject common name, "cn:NAME" (a bare NAME means the same), or the SPKI
	// pin of its public key, "spki:sha256/BASE64" ([SPKIPin]); prefixes are
	// case-insensitive. The two namespaces never mix: a common name is compared with
	// common names only, so a certificate whose common name spells a pin does not
	// get that pin's role. A pin is looked up first. A malformed entry (a pin that
	// is not the base64 of 32 bytes, a bare "sha256/...", white space around a name,
	// an unknown "word:" prefix) makes Serve fail with ErrConfig. A verified client
	// that no entry names is refused at connect, and so is a certificate with more
	// than one common name. At least one entry is required.
	Allow map[string]Role
	// Reload, when it delivers, makes the daemon read CertFile, KeyFile and
	// ClientCAFile again (e.g. on SIGHUP): new connections use the new files,
	// connected clients are not disturbed. Files that do not load are logged and the
	// previous ones kept.
	Reload <-chan struct{}
	// HandshakeTimeout bounds the TLS handshake (default 5 s); a client that has not
	// completed it by then is refused.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that has no request under way and has sent no
	// frame for that long (default 5 min).
	IdleTimeout time.Duration
	// OnListen, if set, is called with the TCP listener's address once it listens
	// (before ServerConfig.OnReady).
	OnListen func(net.Addr)
	// Listener, if set, is a listening TCP socket served instead of listening on
	// Listen (e.g. one passed by systemd's socket activation); Listen may then be "".
	// The daemon closes it when it stops.
	Listener net.Listener
	// OnReload, if set, is called after each reload Reload asked for, with nil or why
	// the files were not loaded (the previous ones stay in use).
	OnReload func(error)
}

// ErrCertificate: the daemon's or a client's certificate files could not be loaded.
var ErrCertificate = errors.New("controlplane: cannot load certificates")

// certs is one loaded set of the daemon's certificate files.
type certs struct {
	cert     *tls.Certificate
	clientCA *x509.CertPool
}

// loadCerts reads the daemon's certificate, key and client CA files.
func loadCerts(rc *RemoteConfig) (*certs, error) {
	cert, err := tls.LoadX509KeyPair(rc.CertFile, rc.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %s, %s: %w", ErrCertificate, rc.CertFile, rc.KeyFile, err)
	}
	pool, err := loadPool(rc.ClientCAFile)
	if err != nil {
		return nil, err
	}
	return &certs{cert: &cert, clientCA: pool}, nil
}

// loadPool reads a PEM file of CA certificates.
func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrCertificate, file)
	}
	return pool, nil
}

// tlsServer is the TLS side of a remote listener: the current certificates (swapped
// whole by reload) and the verification of clients.
type tlsServer struct {
	rc    *RemoteConfig
	allow *allowList
	cur   atomic.Pointer[certs]
	now   func() time.Time
}

func newTLSServer(rc *RemoteConfig, allow *allowList) (*tlsServer, error) {
	c, err := loadCerts(rc)
	if err != nil {
		return nil, err
	}
	t := &tlsServer{rc: rc, allow: allow, now: time.Now}
	t.cur.Store(c)
	return t, nil
}

// reload reads the certificate files again; on failure the loaded ones stay.
func (t *tlsServer) reload() error {
	c, err := loadCerts(t.rc)
	if err != nil {
		return err
	}
	t.cur.Store(c)
	return nil
}

// config returns the tls.Config of the listener. The client's certificate is
// verified by verify (not by crypto/tls), so that a refusal can name the client.
func (t *tlsServer) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		MaxVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAnyClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return t.cur.Load().cert, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := t.verify(cs.PeerCertificates)
			return err
		},
	}
}

// refusedError is why a remote client was refused at connect: its certificate did
// not verify, or no Allow entry names it.
type refusedError struct {
	// Client names the certificate: once its chain verified, its common name
	// (quoted) and SPKI pin; before, "unverified certificate claiming CN=..."; ""
	// when the client sent none.
	Client string
	// Reason says why, in words.
	Reason string
	// Err is the verification error, if any (an x509.CertificateInvalidError,
	// x509.UnknownAuthorityError ...).
	Err error
}

func (e *refusedError) Error() string {
	if e.Client == "" {
		return "controlplane: client refused: " + e.Reason
	}
	return "controlplane: client " + e.Client + " refused: " + e.Reason
}

// Unwrap returns the verification error.
func (e *refusedError) Unwrap() error { return e.Err }

// verify checks a client's chain against the current client CAs, and its identity
// against Allow, returning its permissions.
func (t *tlsServer) verify(chain []*x509.Certificate) (perms, error) {
	if len(chain) == 0 {
		return perms{}, &refusedError{Reason: "no client certificate"}
	}
	leaf := chain[0]
	// Until the chain verifies, the certificate's names are only claims: they are
	// logged as such, and quoted.
	who := describeUnverified(leaf)
	if cns := commonNames(leaf); len(cns) > 1 {
		// crypto/x509 would take the last; a CA may have vetted only the first.
		return perms{}, &refusedError{Client: who, Reason: fmt.Sprintf("certificate has %d common names (at most one is accepted)", len(cns))}
	}
	now := t.now()
	switch {
	case now.Before(leaf.NotBefore):
		return perms{}, &refusedError{Client: who, Reason: "certificate not valid before " + leaf.NotBefore.UTC().Format(time.RFC3339)}
	case now.After(leaf.NotAfter):
		return perms{}, &refusedError{Client: who, Reason: "certificate expired at " + leaf.NotAfter.UTC().Format(time.RFC3339)}
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: t.cur.Load().clientCA, Intermediates: inter,
		CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return perms{}, &refusedError{Client: who, Reason: "certificate does not verify: " + err.Error(), Err: err}
	}
	who = describeCert(leaf)
	p, ok := t.allow.grant(leaf)
	if !ok {
		return perms{}, &refusedError{Client: who, Reason: "verified, but no --allow entry names it"}
	}
	return p, nil
}
