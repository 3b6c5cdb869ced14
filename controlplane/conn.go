package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// errDropped is why a client's answers are no longer delivered: it stopped reading
// them (or its connection failed).
var errDropped = errors.New("controlplane: client dropped")

// serverConn is one client connection. One goroutine reads requests and starts a
// handler goroutine for each (at most maxConnRequests at once); the socket's write
// side is the frame writer's (internal/framewriter), whose goroutine writes the framed
// answers the handlers queue, batched. A client that lets the queue fill, or leaves a
// Write unfinished, for WriteTimeout is dropped: a slow client never holds up other
// clients, the adapters, or the handlers.
type serverConn struct {
	srv    *server
	nc     net.Conn
	ctx    context.Context // ends when the client leaves, is dropped, or the daemon stops
	cancel context.CancelFunc

	w        *framewriter.Writer // writes the framed answers
	dead     chan struct{}       // closed when the connection can no longer deliver
	deadOnce sync.Once
	sem      chan struct{}
	handlers sync.WaitGroup

	mu      sync.Mutex
	ids     map[string]struct{} // requests under way
	pending int                 // bytes of the request bodies under way (lim.budget)

	lim connLimits // what its requests may hold (set by run, from perm)

	perm   perms    // what the client may do (set before run)
	remote *remote  // the TCP listener it came from, or nil (Unix socket)
	raw    net.Conn // under nc's TLS, for a remote client
	// activity is raw as the TLS layer reads it, for a remote client.
	activity *activityConn
	idle     *idleWatch // the client's idle bound (set before run)
}

func newServerConn(parent context.Context, s *server, nc net.Conn) *serverConn {
	c := &serverConn{srv: s, nc: nc, dead: make(chan struct{}), ids: make(map[string]struct{})}
	c.ctx, c.cancel = context.WithCancel(parent)
	c.w = framewriter.New(nc, framewriter.Config{Timeout: s.cfg.WriteTimeout, MaxQueued: sendQueue, OnFail: c.writeFailed})
	return c
}

// shutdown makes the reader stop at once (the daemon is stopping).
func (c *serverConn) shutdown() {
	c.cancel()
	_ = c.nc.SetReadDeadline(time.Now())
}

// kill marks the connection undeliverable and closes it.
func (c *serverConn) kill() { c.terminate(false) }

// drop kills the connection of a client that does not read its answers, counting it
// once however many writers noticed.
func (c *serverConn) drop() { c.terminate(true) }

// terminate ends the connection once: the handlers' context is cancelled and the
// socket closed.
func (c *serverConn) terminate(dropped bool) {
	c.deadOnce.Do(func() {
		c.idle.stop()
		if dropped {
			c.srv.dropped.Add(1)
			if c.remote != nil {
				c.remote.dropped.Add(1)
				c.srv.log.Warn("remote client does not read its answers; dropped",
					"client", c.raw.RemoteAddr().String(), "identity", c.perm.identity)
			} else {
				c.srv.log.Warn("client does not read its answers; dropped")
			}
		}
		close(c.dead)
		c.w.Stop() // answers not written yet are dropped
		c.cancel()
		if c.raw != nil {
			_ = c.raw.Close() // no close_notify: it could wait on a stuck write
		} else {
			_ = c.nc.Close()
		}
	})
}

// run serves the connection until the client leaves, is dropped, breaks framing,
// or the daemon stops; then it waits for its handlers and flushes their answers.
func (c *serverConn) run() {
	c.lim = limitsFor(c.perm)
	c.sem = make(chan struct{}, c.lim.requests)
	stop := context.AfterFunc(c.ctx, func() { _ = c.nc.SetReadDeadline(time.Now()) })
	c.read()
	stop()
	c.cancel() // the client is gone or must go: end its requests
	c.handlers.Wait()
	c.w.Close() // write what the handlers answered, then end
	<-c.w.Done()
	c.kill()
}

// read reads requests until the stream ends or breaks.
func (c *serverConn) read() {
	fr := frameReader{r: c.nc, max: c.lim.frame}
	for {
		body, err := fr.read()
		if err != nil {
			var fe *proto.FrameError
			if errors.As(err, &fe) && errors.Is(fe, ErrFrameTooLarge) {
				// The body is never read, so the stream cannot be followed further:
				// answer frame_too_large, then close.
				c.srv.log.Warn("client sent an oversized frame; closing", "size", fe.Length, "max", fe.Max)
				c.respond("", nil, c.tooLarge(fe.Length, fe.Max))
			} else if !errors.Is(err, io.EOF) && c.ctx.Err() == nil {
				c.srv.log.Debug("client connection ended", "error", err)
			}
			return
		}
		c.idle.touch()
		env, echo, perr := decodeRequest(body)
		if perr != nil {
			c.respond(echo, nil, perr)
			continue
		}
		if env.Method != methodSend && len(body) > maxSmallBody {
			// Its params are a few bytes by nature: a large body is padding, held for
			// as long as the request runs (a Discover: up to ten minutes).
			c.respond(env.ID, nil, newError(CodeFrameTooLarge, map[string]any{"size": len(body), "max": maxSmallBody, "method": env.Method},
				"request of %d bytes refused: a %s request is at most %d bytes (only Send carries large params)",
				len(body), env.Method, maxSmallBody))
			continue
		}
		if !c.reserve(len(body)) {
			// The connection stays usable: its requests under way still hold the budget.
			c.respond(env.ID, nil, newError(CodeFrameTooLarge, map[string]any{"size": len(body), "budget": c.lim.budget},
				"request of %d bytes refused: this connection's requests under way already hold %d of its %d-byte budget",
				len(body), c.held(), c.lim.budget))
			continue
		}
		if !c.begin(env.ID) {
			c.release(len(body))
			c.respond(env.ID, nil, newError(CodeInvalidParams, nil, "id %s is already in use by a request under way", env.ID))
			continue
		}
		select {
		case c.sem <- struct{}{}:
		case <-c.ctx.Done():
			c.end(env.ID)
			c.release(len(body))
			return
		}
		c.handlers.Add(1)
		size := len(body)
		go func() {
			defer c.handlers.Done()
			defer func() { <-c.sem }()
			defer c.release(size)
			c.dispatch(env) // releases env.ID before its final response
		}()
	}
}

// connBudget bounds the bytes of request bodies one connection may have under way
// at once (a request keeps its params for its whole life): twice the frame cap. A
// request beyond it is answered frame_too_large, and the connection stays usable.
const connBudget = 2 * maxFrame

// maxSmallBody caps the body of a request for any method but Send: their params are a
// few bytes by nature ({"timeout_ms": N}, {"adapter": NAME}), so a larger body is
// refused (frame_too_large, the connection stays) rather than held while the request
// runs. It is also the frame cap of a client whose role allows no Send.
const maxSmallBody = 16 << 10

// The bounds of a remote client whose role allows no Send (read, logs): what its
// requests and its unfinished frame can hold is at most readBudget + maxSmallBody
// (80 KiB) per connection, so at most 224 × 80 KiB = 17.5 MiB for the remote slots of
// the default MaxClients (256, an eighth kept for the socket).
const (
	readBudget   = 4 * maxSmallBody // bytes of request bodies under way
	readRequests = 16               // requests under way
)

// connLimits are what one connection's requests may hold.
type connLimits struct {
	frame    int // the cap on one frame's body
	budget   int // bytes of the request bodies under way
	requests int // requests under way
}

// limitsFor returns the bounds of a connection with permissions p: the owner and
// role call may Send (params up to the frame cap); roles read and logs call only
// methods whose params are a few bytes, so their frames, budget and requests under way
// are small and every remote slot together stays bounded.
func limitsFor(p perms) connLimits {
	if p.allows(methodSend) {
		return connLimits{frame: maxFrame, budget: connBudget, requests: maxConnRequests}
	}
	return connLimits{frame: maxSmallBody, budget: readBudget, requests: readRequests}
}

// tooLarge is the answer to a frame whose length is above the connection's cap.
func (c *serverConn) tooLarge(size uint64, max int) *Error {
	if max < maxFrame {
		return newError(CodeFrameTooLarge, map[string]any{"size": size, "max": max, "role": c.perm.role},
			"frame of %d bytes exceeds the %d-byte cap of role %s, which calls no method taking large params", size, max, c.perm.role)
	}
	return newError(CodeFrameTooLarge, map[string]any{"size": size}, "frame of %d bytes exceeds the %d-byte cap", size, maxFrame)
}

// reserve counts n bytes against the connection's budget, if they fit. A request
// alone never exceeds it (a frame is at most the connection's cap).
func (c *serverConn) reserve(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending+n > c.lim.budget {
		return false
	}
	c.pending += n
	return true
}

func (c *serverConn) release(n int) {
	c.mu.Lock()
	c.pending -= n
	c.mu.Unlock()
}

func (c *serverConn) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending
}

func (c *serverConn) begin(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.ids[id]; dup {
		return false
	}
	c.ids[id] = struct{}{}
	return true
}

func (c *serverConn) end(id string) {
	c.mu.Lock()
	delete(c.ids, id)
	c.mu.Unlock()
	c.idle.touch()
}

// writeFailed is the writer's report of a failed Write: the connection is over, and a
// Write that outlasted WriteTimeout means the client does not read its answers.
func (c *serverConn) writeFailed(err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.drop()
	}
	c.kill()
}

// send frames and queues one envelope. It fails when the client is dropped, or is
// dropped by it: a queue still over its bound after the write timeout means the client
// does not read.
func (c *serverConn) send(env *envelope) error {
	body, err := json.Marshal(env)
	if err == nil && len(body) > maxFrame {
		// Nothing a handler returns should come near the cap; never send it.
		c.srv.log.Error("answer exceeds the frame cap", "method", env.Method, "size", len(body))
		body, err = json.Marshal(&envelope{ID: env.ID, Kind: kindResponse,
			Error: newError(CodeInternal, nil, "answer of %d bytes exceeds the frame cap", len(body))})
	}
	if err != nil {
		return err
	}
	frame, err := proto.AppendFrame(nil, body, maxFrame, true)
	if err != nil {
		return err
	}
	select {
	case <-c.dead:
		return errDropped
	default:
	}
	if !c.w.WaitRoom(c.srv.cfg.WriteTimeout) {
		c.drop()
		return errDropped
	}
	if !c.w.Queue(frame, nil, 0, nil) {
		return errDropped
	}
	c.w.Kick()
	return nil
}

// respond sends the final response of a request: result (marshalled) or error.
func (c *serverConn) respond(id string, result any, e *Error) {
	env := &envelope{ID: id, Kind: kindResponse, Error: e}
	if e == nil {
		b, err := json.Marshal(result)
		if err != nil {
			env.Error = newError(CodeInternal, nil, "encoding the result: %v", err)
		} else {
			env.Result = b
		}
	}
	_ = c.send(env) // a dropped client gets nothing more
}

// event sends one event of a streamed answer.
func (c *serverConn) event(id, method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.send(&envelope{ID: id, Kind: kindEvent, Method: method, Params: b})
}
