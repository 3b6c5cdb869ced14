package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// remote is the daemon's TCP listener with mutual TLS.
type remote struct {
	s   *server
	rc  RemoteConfig
	tls *tlsServer
	cfg *tls.Config
	ln  net.Listener

	handshakes chan struct{} // a slot per handshake under way

	refused atomic.Uint64 // of Status.Remote; the server's totals count them too
	dropped atomic.Uint64
	reloads atomic.Uint64
}

// newRemote validates the remote configuration and loads the certificates; it
// does not listen yet.
func newRemote(s *server, rc RemoteConfig) (*remote, error) {
	if rc.Listen == "" && rc.Listener == nil {
		return nil, fmt.Errorf("%w: remote: no listen address", ErrConfig)
	}
	if rc.CertFile == "" || rc.KeyFile == "" || rc.ClientCAFile == "" {
		return nil, fmt.Errorf("%w: remote: a certificate, its key and a client CA are all required (there is no plain TCP)", ErrConfig)
	}
	if err := checkAllow(rc.Allow); err != nil {
		return nil, err
	}
	allow := make(map[string]Role, len(rc.Allow))
	for k, v := range rc.Allow {
		allow[k] = v
	}
	rc.Allow = allow
	if rc.HandshakeTimeout <= 0 {
		rc.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if rc.IdleTimeout <= 0 {
		rc.IdleTimeout = DefaultIdleTimeout
	}
	r := &remote{s: s, rc: rc, handshakes: make(chan struct{}, s.cfg.MaxClients)}
	t, err := newTLSServer(&r.rc)
	if err != nil {
		return nil, err
	}
	r.tls, r.cfg = t, t.config()
	r.checkOwnCert()
	return r, nil
}

// checkOwnCert warns when the daemon's own certificate is not valid now: clients
// would refuse it.
func (r *remote) checkOwnCert() {
	leaf := r.tls.cur.Load().cert.Leaf
	now := time.Now()
	switch {
	case leaf == nil:
	case now.After(leaf.NotAfter):
		r.s.log.Warn("the daemon's certificate has expired: clients will refuse it", "cert", r.rc.CertFile, "not_after", leaf.NotAfter)
	case now.Before(leaf.NotBefore):
		r.s.log.Warn("the daemon's certificate is not valid yet: clients will refuse it", "cert", r.rc.CertFile, "not_before", leaf.NotBefore)
	}
}

// listen opens the TCP listener.
func (r *remote) listen(ctx context.Context) error {
	ln := r.rc.Listener
	if ln == nil {
		var lc net.ListenConfig
		var err error
		if ln, err = lc.Listen(ctx, "tcp", r.rc.Listen); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSocket, r.rc.Listen, err)
		}
	}
	r.ln = ln
	if r.rc.OnListen != nil {
		r.rc.OnListen(ln.Addr())
	}
	return nil
}

// watchReload reloads the certificate files whenever Reload delivers, until ctx
// ends.
func (r *remote) watchReload(ctx context.Context) {
	if r.rc.Reload == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-r.rc.Reload:
			if !ok {
				return
			}
			err := r.tls.reload()
			if err != nil {
				r.s.log.Error("certificate reload failed; the previous certificates stay in use", "error", err)
			} else {
				r.reloads.Add(1)
				r.s.log.Info("certificates reloaded", "cert", r.rc.CertFile, "client_ca", r.rc.ClientCAFile,
					"not_after", r.tls.cur.Load().cert.Leaf.NotAfter)
				r.checkOwnCert()
			}
			if r.rc.OnReload != nil {
				r.rc.OnReload(err)
			}
		}
	}
}

// open wraps an accepted TCP connection in TLS; the handshake is done by the
// connection's own goroutine (handshake), never by the accept loop.
func (r *remote) open(ctx context.Context, nc net.Conn) *serverConn {
	c := newServerConn(ctx, r.s, tls.Server(nc, r.cfg))
	c.raw = nc
	c.remote = r
	return c
}

// beginHandshake takes a handshake slot, if one is free.
func (r *remote) beginHandshake() bool {
	select {
	case r.handshakes <- struct{}{}:
		return true
	default:
		return false
	}
}

func (r *remote) endHandshake() { <-r.handshakes }

// refuse counts and logs a client refused at connect.
func (r *remote) refuse(addr net.Addr, who, why string, err error) {
	r.refused.Add(1)
	r.s.refused.Add(1)
	args := []any{"client", addr.String(), "identity", orUnknown(who)}
	if err != nil {
		args = append(args, "error", err)
	}
	r.s.log.Warn("remote client refused: "+why, args...)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// handshake completes the TLS handshake within HandshakeTimeout and sets the
// client's permissions; a client that fails it is refused (counted, logged, closed).
func (c *serverConn) handshake() bool {
	r := c.remote
	tc := c.nc.(*tls.Conn)
	ctx, cancel := context.WithTimeout(c.ctx, r.rc.HandshakeTimeout)
	defer cancel()
	err := tc.HandshakeContext(ctx)
	addr := c.raw.RemoteAddr()
	if err != nil {
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			r.refuse(addr, re.Client, re.Reason, nil)
		case c.ctx.Err() != nil:
			// the daemon is stopping: not a refusal
		case ctx.Err() != nil:
			r.refuse(addr, "", fmt.Sprintf("no TLS handshake within %v", r.rc.HandshakeTimeout), nil)
		default:
			r.refuse(addr, "", "TLS handshake failed", err)
		}
		c.linger()
		c.kill()
		return false
	}
	chain := tc.ConnectionState().PeerCertificates
	p, ok := grant(r.rc.Allow, chain[0]) // verified by VerifyConnection
	if !ok {
		// Allow does not change while serving; verify would have refused.
		r.refuse(addr, describeCert(chain[0]), "no --allow entry names it", nil)
		c.kill()
		return false
	}
	c.perm = p
	c.idle = newIdleWatch(c, r.rc.IdleTimeout)
	return true
}

// refusalLinger bounds how long a refused client's bytes are read and discarded
// after the daemon's alert, and how many.
const (
	refusalLinger    = 500 * time.Millisecond
	refusalLingerMax = 64 << 10
)

// linger lets the TLS alert of a refusal reach the client: the daemon stops writing
// and discards what the client still sends for a moment. Closed at once with unread
// bytes (the client's first request, which TLS 1.3 lets it send before the daemon
// has checked its certificate), the socket would be reset, and the client would see
// "connection reset" instead of the alert.
func (c *serverConn) linger() {
	tcp, ok := c.raw.(*net.TCPConn)
	if !ok || c.ctx.Err() != nil {
		return
	}
	_ = tcp.CloseWrite()
	_ = tcp.SetReadDeadline(time.Now().Add(refusalLinger))
	_, _ = io.Copy(io.Discard, io.LimitReader(tcp, refusalLingerMax))
}

// idleWatch closes a connection that has no request under way and has sent no
// frame for its timeout.
type idleWatch struct {
	c *serverConn
	d time.Duration

	mu   sync.Mutex
	last time.Time
	t    *time.Timer
}

func newIdleWatch(c *serverConn, d time.Duration) *idleWatch {
	w := &idleWatch{c: c, d: d, last: time.Now()}
	w.mu.Lock()
	w.t = time.AfterFunc(d, w.fire)
	w.mu.Unlock()
	return w
}

// touch records activity: a frame read, or a request ended.
func (w *idleWatch) touch() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// stop ends the watch.
func (w *idleWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.t.Stop()
	w.mu.Unlock()
}

func (w *idleWatch) fire() {
	w.mu.Lock()
	if left := w.d - time.Since(w.last); left > 0 {
		w.t.Reset(left)
		w.mu.Unlock()
		return
	}
	if w.c.busy() {
		w.t.Reset(w.d)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	r := w.c.remote
	r.dropped.Add(1)
	r.s.dropped.Add(1)
	r.s.log.Warn("remote client idle; closed", "client", w.c.raw.RemoteAddr().String(),
		"identity", w.c.perm.identity, "idle", w.d)
	w.c.kill() // stops the watch
}

// busy reports whether the connection has requests under way.
func (c *serverConn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids) > 0
}

// status reports the remote listener in Status.
func (r *remote) status() *RemoteStatus {
	st := &RemoteStatus{Listen: r.ln.Addr().String(), RefusedClients: r.refused.Load(),
		DroppedClients: r.dropped.Load(), Reloads: r.reloads.Load()}
	if leaf := r.tls.cur.Load().cert.Leaf; leaf != nil {
		st.CertNotAfter = leaf.NotAfter.UTC()
	}
	return st
}

// RemoteStatus is Status's report of the TCP listener (ServerConfig.Remote).
type RemoteStatus struct {
	// Listen is the address listened on.
	Listen string `json:"listen"`
	// RefusedClients counts remote clients refused: at connect (no or bad
	// certificate, not allowed, no TLS 1.3 handshake in time) or for too many clients.
	// StatusResult.RefusedClients counts them too.
	RefusedClients uint64 `json:"refused_clients"`
	// DroppedClients counts remote clients closed for being idle or not reading
	// their answers. StatusResult.DroppedClients counts them too.
	DroppedClients uint64 `json:"dropped_clients"`
	// Reloads counts successful certificate reloads.
	Reloads uint64 `json:"reloads"`
	// CertNotAfter is when the daemon's certificate in use expires.
	CertNotAfter time.Time `json:"cert_not_after"`
}
