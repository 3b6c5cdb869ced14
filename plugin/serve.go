package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/sentinel"
	"github.com/adapterkit/adapterkit/wire"
)

// Errors that end a connection, returned by Serve. A host that broke the protocol in a
// way that cannot be answered with an error reply ends it with a *wire.ViolationError
// of one of the host's kinds (wire.HostFrame, wire.HostEnvelope, wire.HostIDNotAbove),
// which errors.Is(err, wire.ErrHostViolation) matches; its Err is the detail.
var (
	// errTextInput: the input began with text instead of a frame header, the mark of
	// a person typing at the adapter or piping text into it rather than a host starting
	// it (the detail of a *wire.ViolationError).
	errTextInput = errors.New("plugin: the input is text, not protocol frames")
	// errIDNotIncreasing: a request's id is not above every id received before.
	errIDNotIncreasing = errors.New("request id does not increase")
	// ErrShutdownIncomplete: at the end of the connection some handlers did not return,
	// or the replies could not be written, within the cleanup bound. Serve returned
	// anyway; those goroutines are abandoned.
	ErrShutdownIncomplete = errors.New("plugin: handlers or writes still running at shutdown")
)

// Messages of the replies the engine makes itself.
const (
	msgNotInitialized = "Adapter is not initialized"
	msgReinitialize   = "Adapter is already initialized"
	msgBusy           = "Too many requests in flight"
)

// Initialization states.
const (
	stateNew int32 = iota
	stateInitializing
	stateReady
	stateFailed
)

// diagLogger is the type of Adapter.Logger.
type diagLogger = interface {
	Warn(msg string, args ...any)
	Error(msg string, args ...any)
}

// conn is one connection being served.
type conn struct {
	a        *Adapter
	log      diagLogger
	handlers map[string]handlerFunc
	catalog  []byte // the initialize result value
	maxFrame int
	inFlight int
	w        *framewriter.Writer

	base context.Context
	stop context.CancelCauseFunc

	state  atomic.Int32
	lastID uint64 // read loop only

	mu         sync.Mutex
	calls      map[uint64]context.CancelCauseFunc // requests in flight (initialize excluded)
	initID     uint64
	initCancel context.CancelCauseFunc
	running    int           // handler and initialize goroutines alive
	closed     bool          // shutting down: start nothing more
	idle       chan struct{} // closed when running drops to 0 after closed
	// turn hands the reading turn to a spare: a goroutine that served a request and
	// waits to read again (see read); spares counts them.
	turn   chan struct{}
	spares atomic.Int32
	// A lone request's handler runs in the goroutine that read it, which keeps the turn
	// (see runInline).
	inline inlineTurn
}

// Serve serves the adapter over one connection: it reads the host's frames from in and
// writes replies to out until in ends (the host disconnected), the host violates the
// protocol, out fails, or ctx is done.
//
// Before reading anything it builds and validates the catalog; an invalid adapter is
// refused with an *adapterError and nothing is read or written.
//
// At the end every handler's context is cancelled; Serve waits for the handlers and
// their replies within the process cleanup bound (about 1 s for handlers, then a short
// flush), and returns regardless once it has passed. It returns nil when in ended
// cleanly and everything finished, a *wire.ViolationError for a host violation, the write
// error when out failed, context.Cause(ctx) when ctx was done, and
// ErrShutdownIncomplete when handlers or writes outlived the bound. When Serve returns
// for another reason than the end of in, the goroutine reading in stays blocked in its
// Read until in is closed or returns; it starts nothing more.
//
// If out is os.Stdout itself, Serve first protects it as [Main] does: the frames go to a
// private copy of the stdout descriptor and os.Stdout is redirected to stderr, for the
// whole process.
func (a *Adapter) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if ctx == nil {
		return fmt.Errorf("plugin: Serve: %w", sentinel.ErrNilContext)
	}
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		pf, err := protectStdout()
		if err != nil {
			return err
		}
		out = pf
	}
	c, err := newConn(ctx, a, out)
	if err != nil {
		return err
	}
	readDone := make(chan error, 1)
	r := proto.NewReader(in, c.maxFrame)
	c.inline.init(c, r, readDone)
	go c.read(r, true, readDone)
	var cause error
	select {
	case cause = <-readDone:
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case <-c.w.Done(): // before shutdown, the writer ends only when a Write failed
		cause = fmt.Errorf("plugin: writing to the host: %w", c.w.Err())
	}
	return c.shutdown(cause)
}

func newConn(ctx context.Context, a *Adapter, out io.Writer) (*conn, error) {
	cat, err := a.Catalog()
	if err != nil {
		return nil, err
	}
	value, err := proto.AppendCatalog(nil, cat)
	if err != nil {
		return nil, &adapterError{Reason: "encoding the catalog", Err: err}
	}
	c := &conn{
		a:        a,
		log:      a.Logger,
		handlers: make(map[string]handlerFunc),
		catalog:  value,
		maxFrame: bound.Frame(a.Limits),
		inFlight: bound.InFlight(a.Limits),
		calls:    make(map[uint64]context.CancelCauseFunc),
	}
	if c.log == nil {
		c.log = discard
	}
	for _, s := range a.Services {
		for m, h := range s.handlers {
			c.handlers[m] = h
		}
	}
	// The connection is found from its handlers' contexts (connContext): a stream's
	// handler outlives the request that started it, not the connection.
	c.base, c.stop = context.WithCancelCause(context.WithValue(ctx, connKey{}, c))
	c.turn = make(chan struct{})
	c.w = newWriter(out, 2*c.maxFrame)
	return c, nil
}

// shutdown ends the connection in a fixed order: cancel every handler, wait for them
// (bounded), flush their replies (bounded), and return the first cause.
func (c *conn) shutdown(cause error) error {
	c.stop(ErrDisconnected)
	cleanup := bound.Cleanup(c.a.Limits)
	timer := time.NewTimer(cleanup / 2)
	defer timer.Stop()

	c.mu.Lock()
	c.closed = true
	var idle chan struct{}
	if c.running > 0 {
		idle = make(chan struct{})
		c.idle = idle
	}
	c.mu.Unlock()
	incomplete := false
	if idle != nil {
		select {
		case <-idle:
		case <-timer.C:
			incomplete = true
			c.log.Warn("handlers did not return after the connection ended; abandoning them")
		}
	}

	if !c.w.Close() {
		timer.Reset(cleanup / 4)
		select {
		case <-c.w.Done():
		case <-timer.C:
			incomplete = true
			c.log.Warn("replies could not be written after the connection ended; abandoning them")
		}
	}
	if cause != nil {
		var v *wire.ViolationError
		if errors.As(cause, &v) && !c.a.reportsCause {
			c.log.Warn("ending the connection", "error", cause)
		}
		return cause
	}
	if incomplete {
		return ErrShutdownIncomplete
	}
	return nil
}

// read holds the connection's reading turn, which exactly one goroutine holds at a
// time: it reads and dispatches frames until in ends (nil on done) or the host violates
// the protocol (the error on done). first marks the connection's first frame.
//
// A request for a handler passes the turn to another goroutine and then runs the handler
// in the goroutine that read it. The request is thus served without waiting for another
// goroutine to be scheduled — on a machine with idle processors that hand-off costs more
// than a whole round trip over the pipes — while the next reader reads on at once: a
// cancel or another request never waits for a handler. After the reply, the goroutine
// waits as a spare to be handed the turn again (up to maxSpares wait; the others end):
// a new goroutine's small stack would grow, copied, on every request it serves. A lone
// request (none other in flight, no more input read ahead) keeps the turn while its
// handler runs, unless the handler outlasts inlineFor (runInline): then there is no
// other goroutine to wake at all. So does initialize (for coldInlineFor, as the first
// request after it): at a start, the adapter answers the handshake and its first
// request on one goroutine.
func (c *conn) read(r *proto.Reader, first bool, done chan<- error) {
	if !first {
		c.w.WaitRoom(0) // the previous reader's last dispatch
	}
	for ; ; first = false {
		p, err := r.ReadFrame()
		if err == io.EOF {
			done <- nil
			return
		}
		if err != nil {
			done <- frameViolation(err, first)
			return
		}
		if c.base.Err() != nil {
			done <- nil
			return
		}
		req, err := c.dispatch(p)
		if err != nil {
			done <- err
			return
		}
		if (req.alone || req.init) && !r.Buffered() {
			if !c.runInline(req) && !c.awaitTurn() {
				return
			}
		} else if req.h != nil || req.init {
			c.passTurn(r, done)
			if req.init {
				c.runInitialize(req)
			} else {
				c.run(req)
			}
			if !c.awaitTurn() {
				return
			}
		}
		c.w.WaitRoom(0)
	}
}

// maxSpares is how many goroutines that served a request wait to read again: as many
// as requests a host keeps in flight at once, often.
const maxSpares = 8

// passTurn hands the reading turn to a spare, or to a new goroutine if none waits.
func (c *conn) passTurn(r *proto.Reader, done chan<- error) {
	select {
	case c.turn <- struct{}{}:
	default:
		go c.read(r, false, done)
	}
}

// awaitTurn waits, as a spare, to be handed the reading turn (true), unless enough
// spares wait already or the connection ends (false: the goroutine is to end).
func (c *conn) awaitTurn() bool {
	defer c.spares.Add(-1)
	if c.spares.Add(1) > maxSpares {
		return false
	}
	select {
	case <-c.turn:
		return true
	case <-c.base.Done():
		return false
	}
}

// frameViolation is the violation of a frame that could not be read; on the first frame,
// input that looks like text is named as such.
func frameViolation(err error, first bool) error {
	var fe *proto.FrameError
	if first && errors.As(err, &fe) {
		if _, ok := fe.Text(); ok {
			return &wire.ViolationError{Kind: wire.HostFrame, Err: fmt.Errorf("%w: %w", errTextInput, err)}
		}
	}
	return &wire.ViolationError{Kind: wire.HostFrame, Err: err}
}

// request is a request to run: its context and cancel, identity, params, and handler
// (or init, for the handshake). A zero request runs nothing.
type request struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	id     uint64
	h      handlerFunc
	params []byte
	long   []proto.LongString // params' long strings, as the envelope decoder found them
	init   bool
	alone  bool // a handler's request while no other is in flight (see runInline)
}

// dispatch handles one payload from the host. It returns the request whose handler the
// caller is to run, if any.
func (c *conn) dispatch(p []byte) (request, error) {
	m, err := proto.DecodeHostMessage(p)
	if err != nil {
		var ee *proto.EnvelopeError
		switch {
		case !errors.As(err, &ee):
			return request{}, &wire.ViolationError{Kind: wire.HostEnvelope, Err: err}
		case ee.Type == proto.TypeCancel:
			return request{}, nil // a malformed cancel is ignored (A4)
		case ee.Type == proto.TypeRequest && ee.ID != 0:
			// A request whose id is known: answered invalid, never executed (A4).
			if err := c.order(ee.ID); err != nil {
				return request{}, err
			}
			c.replyError(ee.ID, wire.CodeInvalid, envelopeMessage(ee))
			return request{}, nil
		}
		return request{}, &wire.ViolationError{Kind: wire.HostEnvelope, ID: ee.ID, Err: err}
	}
	if m.Type == proto.TypeCancel {
		c.cancel(m.ID)
		return request{}, nil
	}
	if err := c.order(m.ID); err != nil {
		return request{}, err
	}
	if m.Method == proto.MethodInitialize {
		return c.initialize(m.ID, m.Params), nil
	}
	if c.state.Load() != stateReady {
		c.replyError(m.ID, wire.CodeInvalid, msgNotInitialized) // R27
		return request{}, nil
	}
	h, ok := c.handlers[m.Method]
	if !ok {
		c.replyError(m.ID, wire.CodeUnavailable, proto.MessageUnknownMethod) // R42
		return request{}, nil
	}
	return c.start(m.ID, h, m.Params, m.Strings), nil
}

func envelopeMessage(ee *proto.EnvelopeError) string {
	msg := "Invalid request envelope: " + ee.Reason
	if ee.Field != "" {
		msg += " (field " + strconv.Quote(ee.Field) + ")"
	}
	return msg
}

// order enforces strictly increasing request ids (A14).
func (c *conn) order(id uint64) error {
	if id <= c.lastID {
		return &wire.ViolationError{Kind: wire.HostIDNotAbove, ID: id, Err: fmt.Errorf("%w: %d after %d", errIDNotIncreasing, id, c.lastID)}
	}
	c.lastID = id
	return nil
}

// cancel cancels a request in flight; unknown and finished ids are ignored (R37).
func (c *conn) cancel(id uint64) {
	c.mu.Lock()
	f := c.calls[id]
	if f == nil && id == c.initID {
		f = c.initCancel
	}
	c.mu.Unlock()
	if f != nil {
		f(ErrCanceledByHost)
	}
}

// start registers a request whose handler is to run, or answers busy when every slot is
// taken (R40, A16: requests in flight are counted until their handler returns, cancelled
// ones included, busy-refused ones and initialize excluded). It returns the request to
// run, or a zero request.
func (c *conn) start(id uint64, h handlerFunc, params []byte, long []proto.LongString) request {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return request{}
	}
	if len(c.calls) >= c.inFlight {
		c.mu.Unlock()
		c.replyError(id, wire.CodeBusy, msgBusy)
		return request{}
	}
	ctx, cancel := context.WithCancelCause(c.base)
	alone := len(c.calls) == 0
	c.calls[id] = cancel
	c.running++
	c.mu.Unlock()
	return request{ctx: ctx, cancel: cancel, id: id, h: h, params: params, long: long, alone: alone}
}

// run runs a request's handler and queues its reply.
func (c *conn) run(req request) {
	ctx, cancel, id, h, params, long := req.ctx, req.cancel, req.id, req.h, req.params, req.long
	returned := false
	defer func() {
		if returned {
			return
		}
		// The handler ended its goroutine with runtime.Goexit (t.FailNow, log.Fatal's
		// cousins): the request still gets exactly one reply and its slot back (R16).
		c.log.Error("handler exited its goroutine without returning", "id", id)
		fb := getFrame()
		*fb = errorFrame((*fb)[:0], id, Errorf(wire.CodeFailed, "handler exited without returning"))
		c.complete(id, cancel, fb, nil)
	}()
	buf := getFrame()
	b := proto.BeginFrame((*buf)[:0])
	head, fast := appendResultHead(b, id)
	var parts []framewriter.Splice
	var err error
	if fast {
		if b, parts, err = c.invoke(ctx, h, params, long, head); err == nil {
			b = append(b, '}')
		}
	} else {
		var v []byte
		if v, parts, err = c.invoke(ctx, h, params, long, nil); err == nil {
			b, parts = proto.AppendResult(b, id, joinSplices(v, parts)), nil
		}
	}
	if err == nil {
		if len(parts) > 0 {
			// The frame's bytes are b with the parts spliced in, written in turn: a large
			// value is never copied (R1: the length covers them all).
			err = finishSplicedFrame(b, parts, c.maxFrame)
		} else {
			b, err = proto.FinishFrame(b, c.maxFrame)
		}
		if err != nil {
			err = Errorf(wire.CodeFailed, "Result exceeds the adapter frame limit")
		}
	}
	if err != nil {
		b, parts = errorFrame((*buf)[:0], id, err), nil
	}
	*buf = b
	returned = true
	c.complete(id, cancel, buf, parts)
}

// finishSplicedFrame fills in the header of a frame whose payload is head's (head starts
// with the header) with parts spliced in.
func finishSplicedFrame(head []byte, parts []framewriter.Splice, max int) error {
	more := 0
	for _, p := range parts {
		more += len(p.Data)
	}
	_, err := proto.FinishSplicedFrame(head, more, max)
	return err
}

// joinSplices returns text with parts spliced in, as one slice.
func joinSplices(text []byte, parts []framewriter.Splice) []byte {
	if len(parts) == 0 {
		return text
	}
	n := len(text)
	for _, p := range parts {
		n += len(p.Data)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, p := range parts {
		out = append(append(out, text[at:p.At]...), p.Data...)
		at = p.At
	}
	return append(out, text[at:]...)
}

// complete frees a request's slot and queues its reply frame. The slot is free before
// the reply can reach the host, so a host that sends a new request on seeing the reply
// never meets a stale busy.
func (c *conn) complete(id uint64, cancel context.CancelCauseFunc, frame *[]byte, parts []framewriter.Splice) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
	cancel(nil)
	c.reply(frame, parts...)
	c.finished()
}

// finished records that a handler goroutine has ended.
func (c *conn) finished() {
	c.mu.Lock()
	c.running--
	if c.running == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	c.mu.Unlock()
}

// panicError is a handler's panic, answered with failed.
type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("handler panic: %v", e.value) }

// invoke runs a handler, turning a panic into an error: the adapter keeps running.
func (c *conn) invoke(ctx context.Context, h handlerFunc, params []byte, long []proto.LongString, dst []byte) (out []byte, parts []framewriter.Splice, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked", "panic", r, "stack", string(debug.Stack()))
			out, parts, err = dst, nil, &panicError{value: r}
		}
	}()
	return h(ctx, params, long, dst)
}

var zeroValue = []byte("0")

// appendResultHead appends a result envelope up to its value, so a handler can encode
// its result straight into the frame. It relies on proto.AppendResult putting the value
// last, and reports false (the caller copies the value instead) if that ever changes.
func appendResultHead(dst []byte, id uint64) ([]byte, bool) {
	n := len(dst)
	dst = proto.AppendResult(dst, id, zeroValue)
	if !bytes.HasSuffix(dst[n:], []byte(`:0}`)) {
		return dst[:n], false
	}
	return dst[:len(dst)-2], true
}

// errorFrame builds the frame of an error reply for err.
func errorFrame(dst []byte, id uint64, err error) []byte {
	code, msg := replyError(err)
	b := proto.AppendError(proto.BeginFrame(dst), id, code, msg)
	b, ferr := proto.FinishFrame(b, 0)
	if ferr != nil { // unreachable: an error envelope with a capped message is small
		panic(ferr)
	}
	return b
}

// replyError answers a request with an error at once, from the read loop.
func (c *conn) replyError(id uint64, code wire.Code, msg string) {
	buf := getFrame()
	*buf = errorFrame((*buf)[:0], id, &Error{Code: code, Message: msg})
	c.enqueue(buf)
}
