package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/stderrlog"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Config describes one adapter to open. Only Path is required.
type Config struct {
	// Path is the adapter executable's absolute path; it is never run through a shell.
	Path string
	// Digest, when set, pins the executable to this hex SHA-256: it is checked at every
	// start, restarts included, on the bytes that are executed (see
	// platform.Config.Digest); a file that differs is not started.
	Digest string
	// Admit, if set, is asked before every start, restarts included: an error keeps
	// the executable from being started (Open fails with an *OpenError at StageSpawn
	// wrapping it; a restart so refused ends a Supervisor as a failed restart does).
	// A host uses it to keep a file it refused from running by any path.
	Admit func() error
	// Args are passed verbatim as argv[1:].
	Args []string
	// Env is the adapter's whole environment; nil means an empty one. Nothing of the
	// host's environment is passed on unless the host puts it here.
	Env []string
	// Dir is the working directory; "" means the executable's directory.
	Dir string
	// Configuration is sent in initialize; it must be a JSON object, nil means {}.
	Configuration json.RawMessage
	// Stderr receives the adapter's standard error; nil discards it (read and dropped:
	// the last lines written before a failed handshake are kept for OpenError.Stderr).
	Stderr io.Writer
	// Resources limits the adapter's tree where the platform supports it.
	Resources platform.Resources
	// Isolation chooses how the tree is contained (default: the strongest available;
	// see platform.Isolation).
	Isolation platform.Isolation
	// Sandbox, when set, restricts the files, network and programs the adapter may
	// use, at every start (see platform.Sandbox); nil leaves it its user's permissions.
	Sandbox *platform.Sandbox
	// Limits lowers the protocol's bounds (nil: the protocol's values).
	Limits *limits.Limits
	// Logger receives the adapter's lifecycle events; nil is silent.
	Logger hclog.Logger
	// Name names the adapter in logs and errors; "" means the executable's base name.
	Name string
	// FailFast makes a call that finds all in-flight slots taken fail at once with busy.
	FailFast bool
	// PackageDir is the directory reserved while the tree may run; "" means the
	// executable's directory.
	PackageDir string
	// Reservations records reserved package directories; nil keeps no record.
	Reservations *Reservations
	// OnExit, if set, is called once, from its own goroutine, when the adapter ends
	// without the host closing it (it exited, or broke the protocol), after its tree
	// was cleaned up.
	OnExit func(ExitEvent)

	// StderrLogger, if set, receives the adapter's standard error line by line through
	// its sub-logger named after the adapter (Name), with the process's pid (and the
	// restart count after a restart) as fields: a line that is an hclog JSON record
	// becomes a record at its own level with its own message and fields, any other
	// line a record at StderrLevel. Stderr still receives the raw bytes. See
	// docs/observability.md for the bounds.
	StderrLogger hclog.Logger
	// StderrLevel is the level of standard error lines that are not hclog JSON
	// records; hclog.NoLevel (the zero value) means hclog.Debug.
	StderrLevel hclog.Level
	// LogTail is how many of the last standard error lines [Stats] keeps (0: none).
	LogTail int
	// Observer, if set, is told of calls and process events; see [Observer].
	Observer *Observer
	// Starts, if set, is the record of the adapter's starts that a [Supervisor] decides
	// its start backoff from and adds to (see [Starts]); nil: the supervisor keeps its
	// own. Open alone neither reads nor writes it.
	Starts *Starts

	obs      *observed // shared by a supervisor's adapters; nil: Open makes one
	restarts int       // restarts before this open (set by the supervisor)
	gen      uint64    // the Starts generation this start was tried in (set by the supervisor)
	// closed, set by a Supervisor, is told when the host closes the adapter itself.
	closed func(*Adapter)
}

// ExitEvent tells the host that an adapter ended on its own.
type ExitEvent struct {
	Adapter *Adapter
	// Cause is why the connection ended: a *wire.ViolationError (ProcessExited with
	// an *ExitError inside, or a protocol violation).
	Cause error
	// Cleanup is nil when the process tree was proven gone, else why not.
	Cleanup error
	// Restart is set only on the one further event a [Supervisor] sends when it could
	// not start the ended adapter again: why (wrapping ErrGaveUp and the *OpenError,
	// e.g. discovery.ErrDigestMismatch for a pinned file that changed). Adapter and
	// Cause are then those of the ending already reported, and Cleanup is nil.
	Restart error
}

// Stage says how far Open got before it failed.
type Stage string

// Stages of Open.
const (
	StageConfig    Stage = "config"
	StageSpawn     Stage = "spawn"
	StageHandshake Stage = "handshake"
)

// OpenError is a failed Open. Err is the cause (a *platform.LaunchError, a runtime
// error, an invalid catalog, ...); Cleanup is the result of ending the tree that a
// failed handshake left, nil when it was proven gone.
type OpenError struct {
	Path    string
	Stage   Stage
	Err     error
	Cleanup error
	// Stderr is, when the process exited during the handshake, the last lines it
	// wrote to standard error (at most 5, each quoted with control characters and
	// invalid UTF-8 escaped, and cut at 240 bytes): usually the reason, such as a
	// missing interpreter. Nil otherwise.
	Stderr []string
}

func (e *OpenError) Error() string {
	msg := fmt.Sprintf("lifecycle: open %s: %s: %v", e.Path, e.Stage, e.Err)
	if len(e.Stderr) > 0 {
		msg += "; its last standard error: " + strings.Join(e.Stderr, " ")
	}
	if e.Cleanup != nil {
		msg += "; cleanup: " + e.Cleanup.Error()
	}
	return msg
}

// Unwrap returns the cause and the cleanup error.
func (e *OpenError) Unwrap() []error {
	if e.Cleanup != nil {
		return []error{e.Err, e.Cleanup}
	}
	return []error{e.Err}
}

// ExitError is the exit status of an adapter process that ended while connected. Exit
// status carries no meaning in the protocol; it is kept for diagnostics.
type ExitError struct {
	State *os.ProcessState
	// Limit is why the kernel stopped the tree when it hit a limit of Config.Resources
	// (errors.Is(Limit, platform.ErrMemoryLimit)), else nil; see platform.Tree.LimitHit.
	Limit error
}

func (e *ExitError) Error() string {
	msg := "adapter process exited"
	if e.State != nil {
		msg = "adapter process " + e.State.String()
	}
	if e.Limit != nil {
		msg += ": " + e.Limit.Error()
	}
	return msg
}

// Unwrap returns Limit, so that errors.Is(err, platform.ErrMemoryLimit) holds for an
// adapter killed at its memory limit.
func (e *ExitError) Unwrap() error { return e.Limit }

// Adapter is one open adapter: a process tree and its connection.
type Adapter struct {
	cfg     Config
	name    string
	pkgDir  string
	log     hclog.Logger
	tree    *platform.Tree
	conn    *runtime.Conn
	catalog *wire.Catalog
	obs     *observed
	slog    *stderrlog.Writer // nil when standard error is not forwarded

	hostClosing atomic.Bool
	startedAt   time.Time     // when the handshake succeeded (set before ready is closed)
	served      atomic.Bool   // a call got the adapter's reply, or it ran past ResetAfter
	wedged      atomic.Bool   // a Supervisor ended it: every slot held by abandoned calls
	ready       chan struct{} // closed when Open has decided the handshake's outcome
	once        sync.Once
	done        chan struct{} // closed when the tree is ended and cleanup decided
	cleanupErr  error
}

// Open starts the adapter and performs the handshake. ctx bounds the whole open; the
// handshake also has the call deadline (30 s). On failure nothing is left running or
// the returned *OpenError says so in Cleanup.
func Open(ctx context.Context, cfg Config) (*Adapter, error) {
	if ctx == nil {
		return nil, &OpenError{Path: cfg.Path, Stage: StageConfig, Err: runtime.ErrNilContext}
	}
	if err := proto.ValidateParams(cfg.Configuration); err != nil {
		return nil, &OpenError{Path: cfg.Path, Stage: StageConfig, Err: fmt.Errorf("configuration: %w: %v", runtime.ErrInvalidParams, err)}
	}
	if cfg.Admit != nil {
		if err := cfg.Admit(); err != nil {
			return nil, &OpenError{Path: cfg.Path, Stage: StageSpawn, Err: err}
		}
	}
	a := &Adapter{cfg: cfg, done: make(chan struct{}), ready: make(chan struct{})}
	a.name = nameOf(&cfg)
	a.obs = cfg.obs
	if a.obs == nil {
		a.obs = newObserved(a.name, &cfg)
	}
	tail := &startTail{next: a.forwardStderr()}
	stderr := io.Writer(tail)
	a.log = cfg.Logger
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	a.log = a.log.Named(a.name)
	a.pkgDir = cfg.PackageDir
	if a.pkgDir == "" {
		a.pkgDir = filepath.Dir(cfg.Path)
	}
	cfg.Reservations.acquire(a.pkgDir)
	tree, err := platform.Start(ctx, platform.Config{
		Path: cfg.Path, Args: cfg.Args, Env: cfg.Env, Dir: cfg.Dir, Digest: cfg.Digest,
		Stderr: stderr, Resources: cfg.Resources, Isolation: cfg.Isolation, Logger: a.log,
		Sandbox: cfg.Sandbox,
	})
	if err != nil {
		a.startedStderr(0)
		cfg.Reservations.finish(a.pkgDir, nil, nil)
		return nil, &OpenError{Path: cfg.Path, Stage: StageSpawn, Err: err}
	}
	a.tree = tree
	a.log.Debug("started", "pid", tree.Pid(), "supervision", tree.Supervision().String())
	a.startedStderr(tree.Pid())
	a.obs.processStart(a, cfg.restarts)
	a.conn = runtime.NewConn(tree.Stdout(), tree.Stdin(), &runtime.Options{
		Limits: cfg.Limits, Logger: a.log, Name: a.name, FailFast: cfg.FailFast,
		OnPeerGone: a.peerGone,
	})
	go a.supervise()
	cat, err := a.conn.Initialize(ctx, cfg.Configuration)
	if err != nil {
		a.hostClosing.Store(true)
		close(a.ready)
		cerr := a.shutdown(false)
		oe := &OpenError{Path: cfg.Path, Stage: StageHandshake, Err: err, Cleanup: cerr}
		if errors.Is(err, wire.ProcessExited) {
			// The tree is closed: its standard error has been copied to the end.
			oe.Stderr = tail.lines()
		}
		return nil, oe
	}
	tail.stop()
	a.catalog = cat
	a.startedAt = time.Now()
	close(a.ready)
	return a, nil
}

// peerGone runs when stdout ends cleanly or stdin breaks: if the process exited
// (within the cleanup bound) that is the cause, with its status; otherwise the symptom
// stands — a closed stdout alone is an output violation (R52, A26).
func (a *Adapter) peerGone() error {
	t := time.NewTimer(bound.Cleanup(a.cfg.Limits))
	defer t.Stop()
	select {
	case <-a.tree.Exited():
		return &wire.ViolationError{Kind: wire.ProcessExited, Err: a.exitError()}
	case <-t.C:
		return nil
	}
}

// exitError describes the exited process: its status and any limit it was stopped at.
func (a *Adapter) exitError() *ExitError {
	return &ExitError{State: a.tree.ExitState(), Limit: a.tree.LimitHit()}
}

// supervise watches the process and the connection until either ends.
func (a *Adapter) supervise() {
	select {
	case <-a.tree.Exited():
		// The process may exit while a grandchild holds its stdout: the connection
		// must not wait for an EOF that never comes.
		a.conn.Abort(&wire.ViolationError{Kind: wire.ProcessExited, Err: a.exitError()})
	case <-a.conn.Done():
	case <-a.done:
		return
	}
	<-a.ready
	if a.hostClosing.Load() {
		return
	}
	a.log.Debug("adapter ended", "cause", a.conn.Err())
	cleanup := a.shutdown(false)
	if a.cfg.OnExit != nil {
		a.cfg.OnExit(ExitEvent{Adapter: a, Cause: a.conn.Err(), Cleanup: cleanup})
	}
}

// shutdown ends the connection and the tree exactly once; grace lets the adapter exit
// on its own first (A23). Every caller gets the same result.
func (a *Adapter) shutdown(grace bool) error {
	a.once.Do(func() {
		defer close(a.done)
		defer a.ended()
		_ = a.conn.Close()
		if grace {
			t := time.NewTimer(bound.Grace(a.cfg.Limits))
			select {
			case <-a.tree.Exited():
			case <-t.C:
				a.log.Debug("disconnect grace passed; killing the tree")
			}
			t.Stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), bound.Cleanup(a.cfg.Limits))
		defer cancel()
		if err := a.tree.Kill(ctx); err != nil {
			a.log.Debug("kill reported an error; verifying anyway", "error", err)
		}
		// Verify is the proof: a tree proven gone is gone, whatever Kill said.
		if verr := a.tree.Verify(ctx); verr != nil {
			a.cleanupErr = fmt.Errorf("lifecycle: %s: process tree not verified gone: %w", a.name, verr)
			a.log.Warn("cleanup not verified; package directory stays reserved", "dir", a.pkgDir, "error", verr)
			if a.cfg.Reservations != nil {
				// Kept open for Reservations.Reverify to try again later.
				a.cfg.Reservations.finish(a.pkgDir, a.tree, a.cleanupErr)
			} else {
				_ = a.tree.Close() // nobody can reverify: release the handles now
			}
			return
		}
		_ = a.tree.Close()
		a.cfg.Reservations.finish(a.pkgDir, nil, nil)
		a.log.Debug("process tree verified gone")
	})
	<-a.done
	return a.cleanupErr
}

// Close disconnects and ends the adapter: stdin is closed, the adapter has up to the
// disconnect grace to exit, then the whole tree is killed and verified gone within the
// cleanup bound. It returns nil when the tree was proven gone, or an error
// wrapping a *platform.UnverifiedError; the package directory then stays reserved.
// Close may be called more than once and after the adapter ended on its own; every
// call returns the same result.
//
// Closing the current adapter of a [Supervisor] ends the supervisor too (as its Close
// would): the host closed it, so it is not restarted and OnExit is not called.
func (a *Adapter) Close() error {
	a.hostClosing.Store(true)
	err := a.shutdown(true)
	if a.cfg.closed != nil {
		a.cfg.closed(a)
	}
	return err
}

// Call calls a method of the adapter; see [runtime.Conn.Call]. Of a supervised adapter,
// call [Supervisor.Call] instead: it waits for a restart under way and makes a call
// again that found the adapter ending before anything was sent.
func (a *Adapter) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if ctx == nil {
		return a.conn.Call(ctx, method, params)
	}
	t := a.obs.begin(method, params)
	res, err := a.conn.Call(ctx, method, params)
	a.obs.end(ctx, t, method, res, err)
	return res, err
}

// Catalog returns the catalog the adapter advertised.
func (a *Adapter) Catalog() *wire.Catalog { return a.catalog }

// InFlight returns the number of the adapter's requests sent and not yet replied to
// (see [runtime.Conn.InFlight]). The connection itself is not handed out: only the
// Adapter may close it, so that an end is always told apart from the host's close.
func (a *Adapter) InFlight() int { return a.conn.InFlight() }

// Name returns the adapter's name.
func (a *Adapter) Name() string { return a.name }

// Path returns the adapter executable's path.
func (a *Adapter) Path() string { return a.cfg.Path }

// PackageDir returns the directory reserved for the adapter's tree.
func (a *Adapter) PackageDir() string { return a.pkgDir }

// Pid returns the adapter process's id.
func (a *Adapter) Pid() int { return a.tree.Pid() }

// Supervision says how the adapter's tree is supervised and why any stronger mechanism
// is not in effect (see platform.Supervision); decided when this process was started.
func (a *Adapter) Supervision() platform.Supervision { return a.tree.Supervision() }

// LimitErr is nil when every limit of Config.Resources was applied to the adapter's
// process tree, else a *platform.LimitError (errors.Is(err, platform.ErrLimitUnsupported))
// naming the limits that were not: the adapter then runs without them.
func (a *Adapter) LimitErr() error { return a.tree.LimitErr() }

// Done is closed when the adapter has ended and its cleanup was decided.
func (a *Adapter) Done() <-chan struct{} { return a.done }

// Err returns nil while the connection is open, else why it ended.
func (a *Adapter) Err() error { return a.conn.Err() }
