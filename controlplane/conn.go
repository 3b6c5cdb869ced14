package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// errDropped is why a client's answers are no longer delivered: it stopped reading
// them (or its connection failed).
var errDropped = errors.New("controlplane: client dropped")

// serverConn is one client connection. One goroutine reads requests and starts a
// handler goroutine for each (at most maxConnRequests at once); one writer goroutine
// owns the socket's write side and takes framed answers from a bounded queue. A
// client that lets the queue fill, or leaves a frame unwritten, for WriteTimeout is
// dropped: a slow client never holds up other clients, the adapters, or the handlers.
type serverConn struct {
	srv    *server
	nc     net.Conn
	ctx    context.Context // ends when the client leaves, is dropped, or the daemon stops
	cancel context.CancelFunc

	out      chan []byte   // framed answers, for the writer
	dead     chan struct{} // closed when the writer can no longer deliver
	deadOnce sync.Once
	sem      chan struct{}
	handlers sync.WaitGroup

	mu  sync.Mutex
	ids map[string]struct{} // requests under way

	perm   perms      // what the client may do (set before run)
	remote *remote    // the TCP listener it came from, or nil (Unix socket)
	raw    net.Conn   // under nc's TLS, for a remote client
	idle   *idleWatch // a remote client's idle bound (set before run)
}

func newServerConn(parent context.Context, s *server, nc net.Conn) *serverConn {
	c := &serverConn{srv: s, nc: nc, out: make(chan []byte, sendQueue), dead: make(chan struct{}),
		sem: make(chan struct{}, maxConnRequests), ids: make(map[string]struct{})}
	c.ctx, c.cancel = context.WithCancel(parent)
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
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writer()
	}()
	stop := context.AfterFunc(c.ctx, func() { _ = c.nc.SetReadDeadline(time.Now()) })
	c.read()
	stop()
	c.cancel() // the client is gone or must go: end its requests
	c.handlers.Wait()
	close(c.out)
	<-writerDone
	c.kill()
}

// read reads requests until the stream ends or breaks.
func (c *serverConn) read() {
	fr := frameReader{r: c.nc}
	for {
		body, err := fr.read()
		if err != nil {
			var fe *proto.FrameError
			if errors.As(err, &fe) && errors.Is(fe, ErrFrameTooLarge) {
				// The body is never read, so the stream cannot be followed further:
				// answer frame_too_large, then close.
				c.srv.log.Warn("client sent an oversized frame; closing", "size", fe.Length)
				c.respond("", nil, newError(CodeFrameTooLarge, map[string]any{"size": fe.Length},
					"frame of %d bytes exceeds the %d-byte cap", fe.Length, maxFrame))
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
		if !c.begin(env.ID) {
			c.respond(env.ID, nil, newError(CodeInvalidParams, nil, "id %s is already in use by a request under way", env.ID))
			continue
		}
		select {
		case c.sem <- struct{}{}:
		case <-c.ctx.Done():
			c.end(env.ID)
			return
		}
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			defer func() { <-c.sem }()
			c.dispatch(env) // releases env.ID before its final response
		}()
	}
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

// writer writes queued frames, each within the write timeout, until the queue is
// closed; after a failed write it discards the rest.
func (c *serverConn) writer() {
	for frame := range c.out {
		select {
		case <-c.dead:
			continue
		default:
		}
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		if _, err := c.nc.Write(frame); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.drop()
			}
			c.kill()
		}
	}
}

// send frames and queues one envelope. It fails when the client is dropped, or is
// dropped by it: a queue still full after the write timeout means the client does
// not read.
func (c *serverConn) send(env *Envelope) error {
	body, err := json.Marshal(env)
	if err == nil && len(body) > maxFrame {
		// Nothing a handler returns should come near the cap; never send it.
		c.srv.log.Error("answer exceeds the frame cap", "method", env.Method, "size", len(body))
		body, err = json.Marshal(&Envelope{ID: env.ID, Kind: KindResponse,
			Error: newError(CodeInternal, nil, "answer of %d bytes exceeds the frame cap", len(body))})
	}
	if err != nil {
		return err
	}
	frame, err := appendFrame(nil, body)
	if err != nil {
		return err
	}
	select {
	case c.out <- frame:
		return nil
	case <-c.dead:
		return errDropped
	default:
	}
	t := time.NewTimer(c.srv.cfg.WriteTimeout)
	defer t.Stop()
	select {
	case c.out <- frame:
		return nil
	case <-c.dead:
		return errDropped
	case <-t.C:
		c.drop()
		return errDropped
	}
}

// respond sends the final response of a request: result (marshalled) or error.
func (c *serverConn) respond(id string, result any, e *Error) {
	env := &Envelope{ID: id, Kind: KindResponse, Error: e}
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
	return c.send(&Envelope{ID: id, Kind: KindEvent, Method: method, Params: b})
}
