package runtime

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// Options configure a [Conn]. A nil *Options is valid and means the defaults; NewConn
// reads the options once and never modifies them.
type Options struct {
	// Limits lowers the protocol's bounds; nil means the protocol's values.
	Limits *limits.Limits
	// Logger receives Debug and Trace records through a sub-logger named Name; nil
	// means silent.
	Logger hclog.Logger
	// Name names the sub-logger and appears in diagnostics; empty means "runtime".
	Name string
	// FailFast makes a call that finds no free in-flight slot fail at once with busy
	// (never started) instead of waiting for one.
	FailFast bool
	// OnPeerGone, if set, is called when the adapter looks gone while the host has not
	// ended the connection: its output ended cleanly (end of stream between frames), or
	// a write to its input failed other than by the write timeout (a broken pipe). The
	// error it returns becomes the connection's cause — package lifecycle returns a
	// ProcessExited *ViolationError carrying the exit status when the process ended, so
	// a crash is reported as "The adapter process exited" rather than as its symptom;
	// nil keeps the symptom (an Output or InputPipe violation). It is called by the
	// reader of the output (the connection's reader goroutine, or a caller reading its
	// reply) or the writer, at most once from each; it must return within a bounded
	// time and must not call Close or Abort of the same Conn (they wait for those
	// goroutines); pending calls fail only after it returns.
	OnPeerGone func() error
	// FirstCallID is the identity of the first call after initialize (which is always
	// id 1). Identities must increase but may skip values, so a host may
	// start higher, e.g. to test how it and an adapter behave at the top of the id space.
	// Zero, or a value not above 1, means 2; a value above the largest identity
	// makes the first call exhaust the space.
	FirstCallID uint64
}

type connState uint8

const (
	stateNew          connState = iota // no initialize yet
	stateInitializing                  // initialize in progress
	stateReady                         // catalog accepted
	stateEnded                         // connection ended
)

// catalogState is the accepted catalog and its method set, published once.
type catalogState struct {
	cat     *wire.Catalog
	methods map[string]struct{}
}

// Conn is the host side of one connection to an adapter. Its methods are safe for
// concurrent use.
type Conn struct {
	log          hclog.Logger
	name         string
	failFast     bool
	onPeerGone   func() error
	frameMax     int
	maxID        uint64
	firstCallID  uint64
	callDeadline time.Duration
	pipeWrite    time.Duration

	r  io.Reader
	w  io.WriteCloser
	fw *framewriter.Writer // writes the adapter's input; its queue is in identity order

	slots    chan struct{} // one token per request in flight
	wake     chan struct{} // 1-buffered: frames are queued
	done     chan struct{} // closed when the connection ends
	ioClosed chan struct{} // closed once w and r are closed
	wg       sync.WaitGroup

	rl readRole // who reads the adapter's output (see read.go)

	cat atomic.Pointer[catalogState]

	mu       sync.Mutex
	state    connState
	cause    error
	closeErr error // from closing w, for Close
	nextID   uint64
	pending  map[uint64]*call
	head     []byte // the envelope of the next lent params, built here and copied by fw
	// abandoned counts the pending calls whose callers gave up; lastAbandon is when the
	// most recent caller gave up.
	abandoned   int
	lastAbandon time.Time
}

// NewConn starts a connection over r (the adapter's output) and w (its input) and returns
// it. r and w must not be nil. The connection starts reading r at once, and its
// writer's goroutine when a caller cannot write its request itself (it ends when idle);
// nothing is written before [Conn.Initialize]. When r has read deadlines
// (SetReadDeadline, as an *os.File pipe on Unix), callers may read their replies from it
// themselves, and the connection sets and clears r's read deadline as they do. w is closed when the connection
// ends, r too if it is an io.Closer; closing them must unblock a Read or Write in
// progress (as it does for io.Pipe and os.File pipes), otherwise Close waits until it
// returns.
func NewConn(r io.Reader, w io.WriteCloser, opts *Options) *Conn {
	if r == nil || w == nil {
		panic("runtime: NewConn with a nil reader or writer")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "runtime"
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	lim := o.Limits
	c := &Conn{
		log:          o.Logger.Named(o.Name),
		name:         o.Name,
		failFast:     o.FailFast,
		onPeerGone:   o.OnPeerGone,
		frameMax:     bound.Frame(lim),
		maxID:        bound.RequestID(lim),
		firstCallID:  o.FirstCallID,
		callDeadline: bound.Call(lim),
		pipeWrite:    bound.PipeWrite(lim),
		r:            r,
		w:            w,
		slots:        make(chan struct{}, bound.InFlight(lim)),
		wake:         make(chan struct{}, 1),
		done:         make(chan struct{}),
		ioClosed:     make(chan struct{}),
		nextID:       1,
		// Not sized for the in-flight bound: it grows with the calls actually in
		// flight, and an idle connection does not pay for a full one.
		pending: make(map[uint64]*call),
	}
	c.fw = c.newWriter(w)
	c.startReading()
	return c
}

// Catalog returns the catalog accepted by [Conn.Initialize], or nil before that. The
// catalog is shared: do not modify it.
func (c *Conn) Catalog() *wire.Catalog {
	if cs := c.cat.Load(); cs != nil {
		return cs.cat
	}
	return nil
}

// Done returns a channel closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open, and afterwards the cause of its end:
// [ErrClosed] after Close, a *wire.ViolationError, the cause given to Abort, or the
// error of a failed initialize.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// InFlight returns the number of requests sent and not yet replied to, including those
// whose callers gave up (cancel or deadline) and whose replies are still awaited.
func (c *Conn) InFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Abandoned returns how many of the requests in flight were given up by their callers
// (cancel or deadline) and still hold their slots awaiting a reply, and when the most
// recent of those callers gave up (zero when n is 0). An adapter whose every slot is
// so held serves no further call until it replies or ends.
func (c *Conn) Abandoned() (n int, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abandoned == 0 {
		return 0, time.Time{}
	}
	return c.abandoned, c.lastAbandon
}

// Close disconnects: it ends the connection with [ErrClosed] (closing the adapter's
// input, so the adapter sees end of input), fails pending calls as closed with an
// uncertain outcome, closes the adapter's output if it is an io.Closer, and waits for the
// connection's goroutines to end. It is idempotent. It returns nil (or the error of
// closing the writer) when the host ended the connection, and the cause when the
// connection had already ended otherwise.
func (c *Conn) Close() error {
	c.end(ErrClosed)
	c.wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause == ErrClosed {
		return c.closeErr
	}
	return c.cause
}

// Abort ends the connection with cause (nil means [ErrClosed]) unless it has ended
// already (the first cause wins), and otherwise behaves as Close.
func (c *Conn) Abort(cause error) {
	if cause == nil {
		cause = ErrClosed
	}
	c.end(cause)
	c.wait()
}

func (c *Conn) wait() {
	<-c.ioClosed
	c.wg.Wait()
	<-c.fw.Done()
}

// ended reports whether the connection has ended.
func (c *Conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// end ends the connection with cause in the documented order (see the package doc) and
// reports whether this call did it; later calls change nothing. It never waits for the
// goroutines, so a reader of the output and the writer may call it.
func (c *Conn) end(cause error) bool {
	c.mu.Lock()
	if c.state == stateEnded {
		c.mu.Unlock()
		return false
	}
	c.state = stateEnded
	c.cause = cause
	// Requests still queued were never handed to a Write: never started. The writer
	// releases what their frames borrow (the caller still holds lent params).
	for _, id := range c.fw.Stop() {
		if cl, ok := c.pending[id]; ok {
			delete(c.pending, id)
			if !cl.abandoned {
				cl.ch <- reply{err: &CallError{Method: cl.method, Code: wire.CodeClosed, Message: "the connection ended before the request was written", NeverStarted: true, Cause: cause}}
			}
		}
	}
	c.abandoned = 0
	for id, cl := range c.pending {
		delete(c.pending, id)
		if !cl.abandoned {
			cl.ch <- reply{err: &CallError{Method: cl.method, ID: id, Code: wire.CodeClosed, Message: "the connection ended", Uncertain: true, Cause: cause}}
		}
	}
	close(c.done)
	c.mu.Unlock()

	if c.rl.watch != nil {
		c.rl.watch.Stop()
	}
	werr := c.w.Close()
	if errors.Is(werr, os.ErrClosed) || errors.Is(werr, io.ErrClosedPipe) {
		werr = nil // closed already by its owner: the adapter's input is closed either way
	}
	if rc, ok := c.r.(io.Closer); ok {
		_ = rc.Close()
	}
	c.mu.Lock()
	c.closeErr = werr
	c.mu.Unlock()
	close(c.ioClosed)
	c.log.Debug("connection ended", "cause", cause)
	return true
}
