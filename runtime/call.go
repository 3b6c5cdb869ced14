package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// call is the record of one request from the moment it takes a slot until its reply is
// delivered. Records are pooled: a caller returns its record after receiving the reply;
// the reader returns an abandoned one when its reply arrives.
type call struct {
	id        uint64
	method    string
	abandoned bool       // the caller gave up; the reply is dropped (under Conn.mu)
	ch        chan reply // 1-buffered; receives exactly one reply
	timer     *time.Timer
}

// reply is what a caller receives: a result value, an adapter's error, or an error the
// host decided (err).
type reply struct {
	value   []byte
	long    []proto.LongString // value's long strings, as the envelope decoder found them
	isErr   bool
	code    wire.Code
	rawCode string
	message string
	err     error
}

var callPool = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &call{ch: make(chan reply, 1), timer: t}
}}

func getCall() *call { return callPool.Get().(*call) }

func putCall(cl *call) {
	cl.id, cl.method, cl.abandoned = 0, "", false
	callPool.Put(cl)
}

// Initialize performs the handshake: it sends request id 1,
// system.adapter.initialize, with {"protocol":1,"configuration":configuration}, and
// validates the catalog of the reply. configuration must be one JSON object;
// nil means {}. The deadline is ctx's, or the standard call deadline.
//
// A configuration that is not an object, an already expired ctx, or a second
// Initialize fail without sending anything (never started) and leave the connection as
// it was. Once the request is sent, any failure (an error reply, an invalid catalog, the
// deadline, a broken pipe) ends the connection with that error as its cause; an
// error reply or an invalid catalog matches proto.ErrInvalidCatalog.
func (c *Conn) Initialize(ctx context.Context, configuration json.RawMessage) (*wire.Catalog, error) {
	const method = proto.MethodInitialize
	if ctx == nil {
		return nil, refused(method, wire.CodeInvalid, "nil context", ErrNilContext)
	}
	if err := proto.ValidateParams(configuration); err != nil {
		return nil, refused(method, wire.CodeInvalid, "configuration is not a JSON object",
			fmt.Errorf("%w: %w", ErrInvalidParams, err))
	}
	c.mu.Lock()
	state := c.state
	if state == stateNew {
		c.state = stateInitializing
	}
	c.mu.Unlock()
	switch state {
	case stateEnded:
		return nil, c.closedNotStarted(method)
	case stateInitializing, stateReady:
		return nil, refused(method, wire.CodeInvalid, "initialize was already called", errAlreadyInitialized)
	}
	value, err := c.roundTrip(ctx, &handover.Request{Method: method, Params: proto.AppendInitializeParams(nil, configuration)}, true)
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) && ce.NeverStarted {
			c.setState(stateInitializing, stateNew)
			return nil, err
		}
		if ce != nil && ce.Cause == nil {
			// An error reply to initialize is an invalid catalog (R26, A8).
			ce.Cause = &proto.CatalogError{Rule: "R26", Reason: "initialize answered with error " + string(ce.Code)}
		}
		c.end(err)
		return nil, err
	}
	cat, err := proto.DecodeCatalog(value)
	if err != nil {
		cerr := &CallError{Method: method, ID: 1, Code: wire.CodeInvalid, Message: "invalid catalog", Cause: err}
		c.end(cerr)
		return nil, cerr
	}
	cs := &catalogState{cat: cat, methods: make(map[string]struct{})}
	for m := range proto.Methods(cat) {
		cs.methods[m] = struct{}{}
	}
	c.mu.Lock()
	ok := c.state == stateInitializing
	if ok {
		c.cat.Store(cs)
		c.state = stateReady
		if c.firstCallID > c.nextID {
			c.nextID = c.firstCallID // identities may skip values (A14)
		}
	}
	c.mu.Unlock()
	if !ok { // the connection ended meanwhile (Close, Abort): the catalog is of no use
		return nil, &CallError{Method: method, ID: 1, Code: wire.CodeClosed, Message: "the connection has ended", Cause: c.Err()}
	}
	c.log.Debug("initialized", "services", len(cat.Services))
	return cat, nil
}

// setState moves the state from one value to another and reports whether it was from.
func (c *Conn) setState(from, to connState) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != from {
		return false
	}
	c.state = to
	return true
}

// Call sends a request for method with params (one JSON object; nil means {}) and waits
// for the reply, returning the result value (which the caller owns) or a *CallError.
//
// Refused without sending anything (never started): a call before a successful
// Initialize (invalid), a method the catalog does not advertise
// (unavailable "Unknown method", ErrUnknownMethod), params that are not one object
// (invalid, ErrInvalidParams), a request whose frame would exceed the frame limit
// (invalid, ErrRequestTooLarge), an already expired ctx (deadline), no free
// slot with FailFast (busy), a connection that has ended (closed). None of these uses a
// request identity, and the connection continues.
//
// The deadline is ctx's, or the standard call deadline from now, and covers
// waiting for a slot. If ctx ends after the request was sent, a cancel is queued and Call
// returns at once with aborted or deadline, uncertain.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.Do(ctx, &handover.Request{Method: method, Params: params})
}

// Do makes the call req describes, as [Conn.Call] does with req.Method and req.Params,
// and sets req.Long. It is how the module's typed client reaches the connection: a
// request leases large params with their pooled buffer, written from it instead of
// copied, and marks params the codec wrote from a type whose encoding is always valid,
// not checked again (see package internal/handover). Only this module can build
// one; req must not be nil.
func (c *Conn) Do(ctx context.Context, req *handover.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	req.Long = nil
	if ctx == nil {
		return nil, refused(method, wire.CodeInvalid, "nil context", ErrNilContext)
	}
	if c.ended() {
		return nil, c.closedNotStarted(method)
	}
	cs := c.cat.Load()
	if cs == nil {
		return nil, refused(method, wire.CodeInvalid, "the connection is not initialized", errNotInitialized)
	}
	if _, ok := cs.methods[method]; !ok {
		return nil, refused(method, wire.CodeUnavailable, proto.MessageUnknownMethod, ErrUnknownMethod)
	}
	if !req.Valid {
		if err := proto.ValidateParams(params); err != nil {
			return nil, refused(method, wire.CodeInvalid, "params are not a JSON object",
				fmt.Errorf("%w: %w", ErrInvalidParams, err))
		}
	}
	if len(params) > c.frameMax {
		return nil, refused(method, wire.CodeInvalid, proto.RequestTooLargeMessage("params", len(params), c.frameMax), ErrRequestTooLarge)
	}
	return c.roundTrip(ctx, req, false)
}

// refused builds the error of a call refused before anything was sent.
func refused(method string, code wire.Code, msg string, cause error) *CallError {
	return &CallError{Method: method, Code: code, Message: msg, NeverStarted: true, Cause: cause}
}

func (c *Conn) closedNotStarted(method string) *CallError {
	return refused(method, wire.CodeClosed, "the connection has ended", c.Err())
}

// ContextError is the error of a call that was never started because its context had
// ended: deadline for an expired deadline, aborted for a cancellation. A layer above the
// connection that gives up before reaching one (waiting for an adapter to restart, say)
// reports its callers the same way.
func ContextError(ctx context.Context, method string) *CallError {
	return ctxError(ctx, method, 0, false)
}

// ctxError is the error of a call whose context ended: aborted for a cancellation,
// deadline for an expired deadline (or the default deadline, when fromTimer).
func ctxError(ctx context.Context, method string, id uint64, fromTimer bool) *CallError {
	e := &CallError{Method: method, ID: id, Code: wire.CodeDeadline, NeverStarted: id == 0, Uncertain: id != 0}
	switch {
	case fromTimer:
		e.Message, e.Cause = "the call deadline passed", ErrCallDeadline
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Message, e.Cause = "the call deadline passed", context.Cause(ctx)
	default:
		e.Code, e.Message, e.Cause = wire.CodeAborted, "the call was cancelled", context.Cause(ctx)
	}
	return e
}

// roundTrip takes a slot, queues req and waits for its reply, setting req.Long. A
// lease lends req.Params' buffer (see enqueue). init marks the initialize request,
// which sends no cancel: its failure ends the connection anyway.
func (c *Conn) roundTrip(ctx context.Context, req *handover.Request, init bool) (json.RawMessage, error) {
	method := req.Method
	if ctx.Err() != nil { // R50, A32: before anything, no identity used
		return nil, ctxError(ctx, method, 0, false)
	}
	cl := getCall()
	var timerC <-chan time.Time
	var dl time.Time // the call deadline, for a Read the caller makes (lead); ctx's own ends it by itself
	if _, ok := ctx.Deadline(); !ok {
		cl.timer.Reset(c.callDeadline) // R43, A37: from the moment of the call
		timerC = cl.timer.C
		if c.rl.dl != nil {
			dl = time.Now().Add(c.callDeadline)
		}
	}
	if err := c.acquire(ctx, timerC, method); err != nil {
		cl.timer.Stop()
		putCall(cl)
		return nil, err
	}
	id, err := c.enqueue(ctx, cl, method, req.Params, req.Lease)
	if err != nil {
		<-c.slots
		cl.timer.Stop()
		putCall(cl)
		return nil, err
	}
	return c.await(ctx, cl, req, id, timerC, dl, init)
}

// await waits for the reply to cl, sent as id: it reads the reply itself when it can
// take the reader role (read.go), else the reader hands it over.
func (c *Conn) await(ctx context.Context, cl *call, req *handover.Request, id uint64, timerC <-chan time.Time, dl time.Time, init bool) (json.RawMessage, error) {
	method := req.Method
	if c.rl.dl != nil {
		c.mu.Lock()
		lead := c.takeRole(cl)
		c.mu.Unlock()
		if lead {
			r, ok := c.lead(ctx, cl, dl)
			if !ok {
				return c.giveUp(ctx, cl, method, id, ctx.Err() == nil, init)
			}
			return c.finish(cl, req, id, r)
		}
	}
	select {
	case r := <-cl.ch:
		return c.finish(cl, req, id, r)
	case <-ctx.Done():
		return c.giveUp(ctx, cl, method, id, false, init)
	case <-timerC:
		return c.giveUp(ctx, cl, method, id, true, init)
	}
}

// finish returns cl's reply r as Call's results, and cl to its pool; a result's long
// strings go to req.Long.
func (c *Conn) finish(cl *call, req *handover.Request, id uint64, r reply) (json.RawMessage, error) {
	cl.timer.Stop()
	putCall(cl)
	if r.err == nil && !r.isErr {
		req.Long = r.long
	}
	return result(req.Method, id, r)
}

// acquire takes an in-flight slot, waiting within the call's deadline unless FailFast
// (R40, A16).
func (c *Conn) acquire(ctx context.Context, timerC <-chan time.Time, method string) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	default:
	}
	if c.failFast {
		return refused(method, wire.CodeBusy, "all in-flight slots are taken", errNoSlot)
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctxError(ctx, method, 0, false)
	case <-timerC:
		return ctxError(ctx, method, 0, true)
	case <-c.done:
		return c.closedNotStarted(method)
	}
}

// requestOverhead bounds a request envelope's bytes beyond its method and params.
const requestOverhead = 96

// enqueue assigns the next identity, records the call as pending and queues its frame,
// all under the lock so frames are written in identity order (R33). A frame above the
// limit is refused with no identity used (R58, A3); running out of identities ends the
// connection (R57, A15). Params larger than a caller writes itself (directMax) that
// come with a loan are not copied: the queue holds the envelope around them and the
// writer writes them from the lent buffer, holding the loan until they are written.
func (c *Conn) enqueue(ctx context.Context, cl *call, method string, params []byte, loan *handover.Lease) (uint64, error) {
	c.mu.Lock()
	if c.state == stateEnded {
		c.mu.Unlock()
		return 0, c.closedNotStarted(method)
	}
	id := c.nextID
	if id > c.maxID {
		c.mu.Unlock()
		c.end(violation(wire.IDExhausted, fmt.Errorf("next request identity %d exceeds %d", id, c.maxID)))
		return 0, c.closedNotStarted(method)
	}
	queued, err := c.queueRequest(id, method, params, loan)
	if err != nil {
		c.mu.Unlock()
		msg := proto.RequestTooLargeMessage("params", len(params), c.frameMax)
		if fe, ok := errors.AsType[*proto.FrameError](err); ok && fe.Length > 0 {
			msg = proto.RequestTooLargeMessage("a frame", int(fe.Length), fe.Max)
		}
		return 0, refused(method, wire.CodeInvalid, msg, fmt.Errorf("%w: %w", ErrRequestTooLarge, err))
	}
	if !queued {
		// The writer failed and is ending the connection (writeFailed, which may first
		// ask the peer's process why). The call was never started; like a request
		// queued a moment earlier, its error names the connection's cause, which a layer
		// above reads to decide whether to make it again (lifecycle retries it on a
		// restarted adapter), so wait for the end within the caller's context (a
		// context that ends first gives the call its own error, never started).
		c.mu.Unlock()
		select {
		case <-c.done:
			return 0, c.closedNotStarted(method)
		case <-ctx.Done():
			return 0, ContextError(ctx, method)
		}
	}
	c.nextID++
	cl.id, cl.method = id, method
	c.pending[id] = cl
	c.mu.Unlock()
	c.fw.Kick()
	if c.log.IsTrace() {
		c.log.Trace("request queued", "id", id, "method", method)
	}
	return id, nil
}

// giveUp ends a caller's wait after its context or deadline ended. If the request is
// still pending it stays so, holding its slot, and a cancel is queued (R36, R39, A17);
// if the reply won the race, it is returned instead. A caller that was reading its reply
// itself passes the reader role on.
func (c *Conn) giveUp(ctx context.Context, cl *call, method string, id uint64, fromTimer, init bool) (json.RawMessage, error) {
	cl.timer.Stop()
	c.mu.Lock()
	if c.pending[id] != cl {
		// Delivered (under the lock) before we looked, or failed by the connection's
		// end: the reply is in the channel.
		c.mu.Unlock()
		r := <-cl.ch
		putCall(cl)
		return result(method, id, r)
	}
	cl.abandoned = true // from here on the reader owns cl
	c.abandoned++
	c.lastAbandon = time.Now()
	if c.rl.holder == roleCaller && c.rl.caller == cl {
		c.passRole() // to readLoop: the reply is still awaited
	}
	if !init { // initialize sends no cancel
		c.queueCancel(id)
	}
	c.mu.Unlock()
	c.fw.Kick()
	err := ctxError(ctx, method, id, fromTimer)
	c.log.Debug("caller gave up", "id", id, "method", method, "code", err.Code)
	return nil, err
}

// result converts a delivered reply into Call's results.
func result(method string, id uint64, r reply) (json.RawMessage, error) {
	switch {
	case r.err != nil:
		return nil, r.err
	case r.isErr:
		return nil, &CallError{Method: method, ID: id, Code: r.code, RawCode: r.rawCode, Message: r.message}
	}
	return r.value, nil
}
