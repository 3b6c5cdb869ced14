package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/internal/cpconst"
)

// remote is the daemon's TCP listener with mutual TLS.
type remote struct {
	s   *server
	rc  RemoteConfig
	tls *tlsServer
	cfg *tls.Config
	ln  net.Listener

	hsMu       sync.Mutex
	handshakes map[*pendingHandshake]struct{} // the handshakes under way
	hsMax      int                            // at most this many (ServerConfig.MaxClients)
	hsSeq      uint64

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
	allow, err := parseAllow(rc.Allow)
	if err != nil {
		return nil, err
	}
	rc.Allow = nil // the caller's map is not kept: allow is what is served
	if rc.HandshakeTimeout <= 0 {
		rc.HandshakeTimeout = cpconst.HandshakeTimeout
	}
	if rc.IdleTimeout <= 0 {
		rc.IdleTimeout = cpconst.IdleTimeout
	}
	r := &remote{s: s, rc: rc, handshakes: make(map[*pendingHandshake]struct{}), hsMax: s.cfg.MaxClients}
	t, err := newTLSServer(&r.rc, allow)
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
// connection's own goroutine (handshake), never by the accept loop. The TLS layer
// reads through an activityConn, so that the handshake's last sign of life is known.
func (r *remote) open(ctx context.Context, nc net.Conn) *serverConn {
	ac := newActivityConn(nc)
	c := newServerConn(ctx, r.s, tls.Server(ac, r.cfg))
	c.raw = nc
	c.remote = r
	c.activity = ac
	return c
}

// activityConn records when its last read returned bytes.
type activityConn struct {
	net.Conn
	last atomic.Int64 // UnixNano
}

func newActivityConn(nc net.Conn) *activityConn {
	ac := &activityConn{Conn: nc}
	ac.last.Store(time.Now().UnixNano())
	return ac
}

func (a *activityConn) Read(p []byte) (int, error) {
	n, err := a.Conn.Read(p)
	if n > 0 {
		a.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// pendingHandshake is one handshake under way, holding a handshake slot.
type pendingHandshake struct {
	c   *serverConn
	seq uint64 // order of arrival, for ties
}

// beginHandshake takes a handshake slot for c. Handshake slots are apart from the
// MaxClients of authenticated clients. When all are taken, the pending handshake
// that has been silent longest (no byte received for the longest time) is dropped
// to make room: a peer that opens connections and sends nothing can never keep a
// real client, which sends its ClientHello at once, from handshaking; nor can a cap
// per address, since the attacker may share the client's address.
func (r *remote) beginHandshake(c *serverConn) *pendingHandshake {
	r.hsMu.Lock()
	r.hsSeq++
	p := &pendingHandshake{c: c, seq: r.hsSeq}
	var victim *pendingHandshake
	if len(r.handshakes) >= r.hsMax {
		for q := range r.handshakes {
			if victim == nil || quieter(q, victim) {
				victim = q
			}
		}
		delete(r.handshakes, victim)
	}
	r.handshakes[p] = struct{}{}
	r.hsMu.Unlock()
	if victim != nil {
		_ = victim.c.raw.Close() // its handshake fails; its goroutine counts the refusal
	}
	return p
}

// quieter reports whether a has been silent longer than b.
func quieter(a, b *pendingHandshake) bool {
	la, lb := a.c.activity.last.Load(), b.c.activity.last.Load()
	if la != lb {
		return la < lb
	}
	return a.seq < b.seq
}

// endHandshake gives back p's slot; false if an eviction took it already.
func (r *remote) endHandshake(p *pendingHandshake) bool {
	r.hsMu.Lock()
	defer r.hsMu.Unlock()
	if _, ok := r.handshakes[p]; !ok {
		return false
	}
	delete(r.handshakes, p)
	return true
}

// refuse logs and counts a client refused at connect. The log record is
// written first, so whoever sees the count (Status) finds the record too.
func (r *remote) refuse(addr net.Addr, who, why string, err error) {
	args := []any{"client", addr.String(), "identity", orUnknown(who)}
	if err != nil {
		args = append(args, "error", err)
	}
	r.s.log.Warn("remote client refused: "+logSafe(why), args...)
	r.refused.Add(1)
	r.s.refused.Add(1)
}

// logSafe escapes what a log record must not hold raw: control characters (a
// newline would split the record) and invalid UTF-8, as Go's %q would.
func logSafe(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) && r != ' ' }) < 0 && utf8.ValidString(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
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
func (c *serverConn) handshake(hs *pendingHandshake) bool {
	r := c.remote
	tc := c.nc.(*tls.Conn)
	ctx, cancel := context.WithTimeout(c.ctx, r.rc.HandshakeTimeout)
	defer cancel()
	err := tc.HandshakeContext(ctx)
	addr := c.raw.RemoteAddr()
	if !r.endHandshake(hs) {
		// Its slot went to a newer connection, which closed it (even if the handshake
		// had just succeeded).
		silent := time.Since(time.Unix(0, c.activity.last.Load())).Round(time.Millisecond)
		r.refuse(addr, "", fmt.Sprintf("handshake slots full (%d): dropped the longest-silent pending handshake (silent %v) for a newer connection", r.hsMax, silent), nil)
		c.kill()
		return false
	}
	if err != nil {
		var re *refusedError
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
	p, ok := r.tls.allow.grant(chain[0]) // verified by VerifyConnection
	if !ok {
		// Allow does not change while serving; verify would have refused.
		r.refuse(addr, describeCert(chain[0]), "no --allow entry names it", nil)
		c.kill()
		return false
	}
	c.perm = p
	watchIdle(c, r.rc.IdleTimeout)
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
