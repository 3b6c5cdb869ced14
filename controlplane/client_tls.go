package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/adapterkit/adapterkit/runtime"
)

// ClientTLSConfig returns the TLS configuration of a remote client: TLS 1.3 only,
// the daemon's certificate verified against the PEM CA certificates in caFile, and
// the client certificate and key (PEM) presented. The daemon's name is checked
// against the host [DialTLS] is given.
func ClientTLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	pool, err := loadPool(caFile)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %s, %s: %w", ErrCertificate, certFile, keyFile, err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, Certificates: []tls.Certificate{cert}}, nil
}

// DialTLS connects to a daemon's remote listener at addr (HOST:PORT) with mutual
// TLS 1.3 and completes the handshake within ctx. cfg is used as given (see
// [ClientTLSConfig]) except that TLS versions below 1.3 are never offered, and
// ServerName defaults to addr's host. A daemon that refuses the client's
// certificate does so after the client's side of the handshake: the first request
// then fails with the TLS alert (e.g. "remote error: tls: bad certificate").
func DialTLS(ctx context.Context, addr string, cfg *tls.Config) (*Client, error) {
	if ctx == nil {
		return nil, runtime.ErrNilContext
	}
	if cfg == nil {
		return nil, fmt.Errorf("controlplane: dial %s: no TLS configuration", addr)
	}
	cfg = cfg.Clone()
	cfg.MinVersion = tls.VersionTLS13
	if cfg.MaxVersion != 0 && cfg.MaxVersion < tls.VersionTLS13 {
		cfg.MaxVersion = tls.VersionTLS13
	}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("controlplane: dial %s: %w", addr, err)
		}
		cfg.ServerName = host
	}
	d := tls.Dialer{Config: cfg}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("controlplane: dial %s: %w", addr, err)
	}
	return NewClient(nc), nil
}
