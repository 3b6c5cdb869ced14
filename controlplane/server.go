package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/controlplane/internal/dirwatch"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
)

// ServerConfig configures [Serve]. Dirs and Socket or Remote (or both) are
// required; the caller's value is never written.
type ServerConfig struct {
	// Socket is the path of the Unix domain socket to create. A stale socket left by
	// a daemon that is gone is replaced; a live one is refused ([ErrSocketInUse]).
	// "" serves no socket (then Remote is required).
	Socket string
	// Remote, if set, serves on TCP with mutual TLS as well (see [RemoteConfig]).
	Remote *RemoteConfig
	// Dirs are the absolute directories the adapters are discovered in (see package
	// discovery for the naming convention); at least one.
	Dirs []string
	// AllowGroupWritable takes adapters that the group of their directory may replace
	// (registry.Config.AllowGroupWritable).
	AllowGroupWritable bool
	// Version is the daemon's version reported by Version; "" means "devel".
	Version string
	// Env is the environment every adapter receives; nil means an empty one.
	Env []string
	// Stderr receives the adapters' standard error; nil discards it.
	Stderr io.Writer
	// Limits lowers the Adapter process protocol's bounds (nil: the protocol's).
	Limits *limits.Limits
	// Restart is the adapters' restart policy; nil means up to 10 restarts with the
	// lifecycle package's backoff.
	Restart *lifecycle.RestartPolicy
	// Sandbox and Sandboxes restrict what the adapters may read, write, execute and
	// connect to: Sandboxes by adapter name, else Sandbox (registry.Config); nil runs
	// them with the daemon's user's permissions.
	Sandbox   *platform.Sandbox
	Sandboxes map[string]*platform.Sandbox
	// Isolation chooses how the adapters' process trees are contained
	// (registry.Config.Isolation; zero: the strongest available).
	Isolation platform.Isolation
	// Logger receives the daemon's logs; nil is silent.
	Logger hclog.Logger
	// MaxClients caps the clients connected at once, on the socket and on TCP
	// together (default 256). Remote clients may hold all but an eighth of them (at
	// least one), kept for the socket, so that they cannot lock its owner out; one
	// more remote client is refused by closing its connection. A socket client (the
	// daemon's own user: no other is admitted) that finds every slot taken takes the
	// slot of the socket client idle the longest (no request under way), which is
	// closed; only when every socket client has a request under way is it refused. A
	// remote client counts once its TLS handshake has proven who it is. Handshakes
	// under way have a pool of MaxClients slots of their own; when it is full, a new
	// connection takes the slot of the pending handshake that has been silent the
	// longest, which is dropped.
	MaxClients int
	// IdleTimeout closes a socket client that has no request under way and has sent
	// no frame for that long (default 1 min); a client with a request under way (a
	// Discover stream, a slow Send) is not idle. Remote clients have their own
	// (RemoteConfig.IdleTimeout).
	IdleTimeout time.Duration
	// WriteTimeout is how long a client may leave its answers unread: a frame not
	// written within it, or a full send queue not drained within it, drops the
	// client (default 5 s).
	WriteTimeout time.Duration
	// RescanInterval is how often a Discover stream scans the directories again
	// (default 200 ms).
	RescanInterval time.Duration
	// Upgrade says how the adapters follow new versions dropped into Dirs (see
	// registry.Upgrade): an adapter opened by name takes over the newest version of its
	// major version once it is proven, the directories being watched (fsnotify) and
	// rescanned every WatchInterval. nil means registry.Upgrade's defaults; its
	// OnUpgrade is the host's.
	Upgrade *registry.Upgrade
	// WatchInterval is how often the directories are rescanned for new versions
	// whatever their change events say (default 10 s).
	WatchInterval time.Duration
	// OnReady, if set, is called once the socket (and the TCP listener, with Remote)
	// accepts connections.
	OnReady func()
	// Listener, if set, is a listening Unix stream socket served instead of creating
	// Socket (e.g. one passed by systemd's socket activation); the daemon closes it
	// when it stops but never removes its file. Socket, if also set, only names it.
	Listener net.Listener
	// Monitor, if set, is attached to the daemon while it serves (see [Monitor]).
	Monitor *Monitor
	// StateDir, if set, is the absolute directory where the daemon keeps what must
	// survive its restarts: the record of refused adapter files (registry.Refusal), so
	// that a file refused once is not started after a restart either. It is created
	// owner-only when first needed; a directory or file there that is not the
	// daemon's user's own, is writable by group or others, or cannot be read as
	// written keeps Serve from starting ([ErrState]). The record is written
	// atomically through a temporary file (".refused.json.*"); one left by a daemon
	// killed while writing is removed once Serve holds its socket. "" keeps the
	// record in memory.
	StateDir string
}

// defaultRestart is the adapters' restart policy when ServerConfig.Restart is nil:
// up to 10 restarts with the lifecycle package's backoff.
var defaultRestart = lifecycle.RestartPolicy{MaxRestarts: 10}

// Defaults of ServerConfig.
const (
	defaultMaxClients     = 256
	defaultIdleTimeout    = time.Minute
	defaultWriteTimeout   = 5 * time.Second
	defaultRescanInterval = 200 * time.Millisecond
	// maxConnRequests caps the requests a single client may have under way; its
	// further requests are not read until one ends.
	maxConnRequests = 64
	// sendQueue is the bytes of answers queued for one client's writer beyond which a
	// handler waits (for at most WriteTimeout) to queue another.
	sendQueue = 1 << 20
)

// Errors of Serve. On an operating system where the daemon cannot learn a Unix-socket
// client's user (Windows), Serve returns an error matching errors.ErrUnsupported.
var (
	// ErrSocketInUse: a daemon already answers on the socket path.
	ErrSocketInUse = errors.New("controlplane: socket in use by a running daemon")
	// ErrSocket: the socket could not be created (its directory is missing or not
	// writable, the path is too long for a Unix socket address, ...); the cause is
	// wrapped too.
	ErrSocket = errors.New("controlplane: cannot create the socket")
	// ErrConfig: the ServerConfig is unusable.
	ErrConfig = errors.New("controlplane: invalid server configuration")
)

// errNoDaemon is Serve's error where the daemon cannot run.
var errNoDaemon = fmt.Errorf("controlplane: no daemon on this operating system: it cannot learn a socket client's user: %w", errors.ErrUnsupported)

// ShutdownError is returned by Serve when the daemon stopped but could not prove
// every adapter's process tree gone (their package directories stay reserved).
type ShutdownError struct{ Err error }

func (e *ShutdownError) Error() string { return "controlplane: shutdown: " + e.Err.Error() }

// Unwrap returns the cause (a *registry.CloseError).
func (e *ShutdownError) Unwrap() error { return e.Err }

// server is one running daemon.
type server struct {
	cfg     ServerConfig
	log     hclog.Logger
	uid     int // the only user whose clients are served
	started time.Time
	set     *adapterSet
	sweep   SweepStatus

	refused atomic.Uint64
	dropped atomic.Uint64
	// refusedFiles is the record of refused adapter files loaded from StateDir,
	// handed to the registry.
	refusedFiles []registry.Refusal
	remote       *remote // the TCP listener, or nil

	mu    sync.Mutex
	conns map[*serverConn]struct{}
	wg    sync.WaitGroup // connections
}

// Serve runs the daemon until ctx ends: it sweeps what a crashed predecessor left
// (platform.Sweep), creates the socket with owner-only permissions, and answers
// clients of the same user, each connection concurrently. When ctx ends it stops
// accepting, removes the socket, ends every connection (requests under way end
// with an error), and closes every adapter verified. It returns nil after a clean
// shutdown, a *ShutdownError when some process tree could not be proven gone, or
// the error that kept it from starting. Serve never installs signal handlers: the
// caller cancels ctx (e.g. with signal.NotifyContext).
func Serve(ctx context.Context, cfg ServerConfig) error {
	if ctx == nil {
		return runtime.ErrNilContext
	}
	if cfg.Listener != nil {
		defer cfg.Listener.Close() // whatever happens, as documented: closing twice is harmless
	}
	if cfg.Remote != nil && cfg.Remote.Listener != nil {
		defer cfg.Remote.Listener.Close()
	}
	s, err := newServer(cfg)
	if err != nil {
		return err
	}
	return s.serve(ctx)
}

func newServer(cfg ServerConfig) (*server, error) {
	if cfg.Socket == "" && cfg.Listener == nil && cfg.Remote == nil {
		return nil, fmt.Errorf("%w: no socket path and no remote listener", ErrConfig)
	}
	if len(cfg.Dirs) == 0 {
		return nil, fmt.Errorf("%w: no adapter directory", ErrConfig)
	}
	cfg.Dirs = append([]string(nil), cfg.Dirs...)
	// The sandboxes by name are static: two of which one may write another's grants
	// are refused at once (their executables and the default sandbox are checked at
	// every start, by the registry).
	if err := (&registry.Config{Sandboxes: cfg.Sandboxes}).CheckGrants(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Version == "" {
		cfg.Version = "devel"
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = defaultMaxClients
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = defaultWriteTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.RescanInterval <= 0 {
		cfg.RescanInterval = defaultRescanInterval
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &server{cfg: cfg, log: log.Named("controlplane"), uid: os.Getuid(), conns: make(map[*serverConn]struct{})}
	if cfg.StateDir != "" {
		refused, err := loadRefused(cfg.StateDir)
		if err != nil {
			return nil, err
		}
		s.refusedFiles = refused
	}
	if cfg.Remote != nil {
		r, err := newRemote(s, *cfg.Remote)
		if err != nil {
			return nil, err
		}
		s.remote = r
	}
	return s, nil
}

func (s *server) serve(ctx context.Context) error {
	if !serveSupported {
		return errNoDaemon
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := discovery.Scan(ctx, &discovery.Options{AllowGroupWritable: s.cfg.AllowGroupWritable}, s.cfg.Dirs...); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.runSweep(ctx)
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	var local net.Listener // the Unix socket, if any
	switch {
	case s.cfg.Listener != nil:
		local = s.cfg.Listener
	case s.cfg.Socket != "":
		ln, err := listen(s.cfg.Socket)
		if err != nil {
			return err
		}
		local = ln
	}
	if local != nil {
		lns = append(lns, local)
	}
	if s.remote != nil {
		if err := s.remote.listen(ctx); err != nil {
			closeAll()
			return err
		}
		lns = append(lns, s.remote.ln)
	}
	if s.cfg.StateDir != "" {
		removeTemps(s.cfg.StateDir, s.log)
	}
	s.started = time.Now()
	// base ends when the daemon stops; it bounds adapter opens, which no client owns.
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	s.set = newAdapterSet(base, &s.cfg, s.log, s.refusedFiles)
	sock := s.cfg.Socket
	if sock == "" && local != nil {
		sock = local.Addr().String() // a passed socket's own address
	}
	if s.remote != nil {
		s.log.Info("serving", "socket", orNone(sock), "listen", s.remote.ln.Addr().String(), "dirs", s.cfg.Dirs, "pid", os.Getpid())
	} else {
		s.log.Info("serving", "socket", sock, "dirs", s.cfg.Dirs, "pid", os.Getpid())
	}
	if m := s.cfg.Monitor; m != nil {
		m.srv.Store(s)
	}
	// New versions dropped into the directories are looked for until shutdown begins.
	var watching sync.WaitGroup
	watching.Go(func() {
		_ = dirwatch.Run(ctx, s.set.reg, s.cfg.Dirs, &dirwatch.Options{Interval: s.cfg.WatchInterval, Logger: s.log})
	})
	if s.cfg.OnReady != nil {
		s.cfg.OnReady()
	}
	var accepting sync.WaitGroup
	if local != nil {
		accepting.Go(func() { s.accept(base, local, func(nc net.Conn) *serverConn { return s.openLocal(base, nc) }) })
	}
	if s.remote != nil {
		accepting.Go(func() { s.accept(base, s.remote.ln, func(nc net.Conn) *serverConn { return s.remote.open(base, nc) }) })
		accepting.Go(func() { s.remote.watchReload(ctx) })
	}
	<-ctx.Done()
	if m := s.cfg.Monitor; m != nil {
		m.srv.CompareAndSwap(s, nil)
	}
	s.log.Info("shutting down")
	closeAll()
	accepting.Wait()
	stop()
	watching.Wait()
	s.mu.Lock()
	for c := range s.conns {
		c.shutdown()
	}
	s.mu.Unlock()
	s.wg.Wait()
	cctx, cancel := context.WithTimeout(context.Background(), bound.Grace(s.set.lim)+bound.Cleanup(s.set.lim)+time.Second)
	defer cancel()
	if err := s.set.close(cctx); err != nil {
		s.log.Error("adapters not all verified gone", "error", err)
		return &ShutdownError{Err: err}
	}
	s.log.Info("stopped; every adapter verified gone")
	return nil
}

func (s *server) runSweep(ctx context.Context) {
	rep, err := platform.Sweep(ctx, s.log)
	if err != nil {
		s.sweep.Error = err.Error()
		s.log.Warn("start-up sweep failed", "error", err)
	}
	conv := func(items []platform.SweptItem) []SweptItem {
		out := make([]SweptItem, 0, len(items))
		for _, it := range items {
			si := SweptItem{Path: it.Path, HostPID: it.HostPid, Pids: it.Pids}
			if it.Err != nil {
				si.Error = it.Err.Error()
			}
			out = append(out, si)
		}
		return out
	}
	s.sweep.Swept, s.sweep.Failed = conv(rep.Swept), conv(rep.Failed)
}

// accept serves connections until the listener is closed. open turns an accepted
// connection into a serverConn, or refuses it (closed and counted: nil).
func (s *server) accept(ctx context.Context, ln net.Listener, open func(net.Conn) *serverConn) {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: back off, never spin.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "error", err, "retry_in", delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		delay = 0
		c := open(nc)
		if c == nil {
			continue
		}
		if c.remote != nil {
			// A remote client takes one of MaxClients only once its handshake proved who
			// it is: unauthenticated peers never crowd out the socket's clients. Its
			// handshake takes a handshake slot, of a pool of its own; when they are all
			// taken, the longest-silent pending handshake is dropped for it.
			hs := c.remote.beginHandshake(c)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				ok := c.handshake(hs) // gives the handshake slot back
				if ok && s.register(c) {
					s.log.Info("remote client connected", "client", c.raw.RemoteAddr().String(), "identity", c.perm.identity, "role", c.perm.role)
					s.serveConn(c)
				}
			}()
			continue
		}
		if !s.register(c) {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

// register counts a client among the connected ones, or refuses it (closed and
// counted) when MaxClients are connected already, or, for a remote client, when the
// remote clients hold all but the socket's reserve (localReserve). A socket client
// finding every slot taken takes the slot of the socket client idle the longest,
// which is closed (evictIdle): its own user's idle connections cannot lock the
// daemon's owner out.
func (s *server) register(c *serverConn) bool {
	s.mu.Lock()
	full := len(s.conns) >= s.cfg.MaxClients
	if c.remote != nil && !full {
		remote := 0
		for o := range s.conns {
			if o.remote != nil {
				remote++
			}
		}
		full = remote >= s.cfg.MaxClients-localReserve(s.cfg.MaxClients)
	}
	var evicted *serverConn
	if full && c.remote == nil {
		if evicted = s.idlest(); evicted != nil {
			delete(s.conns, evicted)
			full = false
		}
	}
	if full {
		s.mu.Unlock()
		if c.remote != nil {
			c.remote.refuse(c.raw.RemoteAddr(), c.perm.identity, fmt.Sprintf("too many clients (%d, of which %d are kept for the socket)",
				s.cfg.MaxClients, localReserve(s.cfg.MaxClients)), nil)
		} else {
			s.log.Warn("too many clients, each with a request under way; connection refused", "max", s.cfg.MaxClients)
			s.refused.Add(1)
		}
		c.kill()
		return false
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	if evicted != nil {
		s.dropped.Add(1)
		s.log.Warn("too many clients; the socket client idle the longest closed for a new one", "max", s.cfg.MaxClients,
			"idle", time.Since(evicted.idle.since()).Round(time.Millisecond))
		evicted.kill()
	}
	return true
}

// idlest returns the socket client with no request under way that has been idle
// the longest, or nil when every socket client has one (s.mu held).
func (s *server) idlest() *serverConn {
	var best *serverConn
	var bestAt time.Time
	for o := range s.conns {
		if o.remote != nil || o.busy() {
			continue
		}
		if at := o.idle.since(); best == nil || at.Before(bestAt) {
			best, bestAt = o, at
		}
	}
	return best
}

// localReserve is how many of maxClients slots remote clients may never take, so
// that remote clients (of any role) cannot lock the daemon's owner out of its own
// socket: an eighth, at least one.
func localReserve(maxClients int) int { return min(maxClients, max(1, maxClients/8)) }

// serveConn runs a registered connection until it ends.
func (s *server) serveConn(c *serverConn) {
	c.run()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// openLocal admits a Unix-socket client, which keeps every permission.
func (s *server) openLocal(ctx context.Context, nc net.Conn) *serverConn {
	if !s.admit(nc) {
		return nil
	}
	c := newServerConn(ctx, s, nc)
	c.perm = ownerPerms
	watchIdle(c, s.cfg.IdleTimeout)
	return c
}

// admit checks the peer's user (SO_PEERCRED, LOCAL_PEERCRED): only the daemon's own
// user is served. A client of another user is told so (permission_denied, not tied to
// a request) and closed; one whose user cannot be read is closed without a word.
func (s *server) admit(nc net.Conn) bool {
	uid, err := peerUID(nc)
	if err == nil && uid == s.uid {
		return true
	}
	s.log.Warn("connection refused", "peer_uid", uid, "error", err)
	s.refused.Add(1)
	if err == nil {
		refuseUser(nc, s.uid, uid)
	}
	_ = nc.Close()
	return false
}

func (s *server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
