package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// ImplementUpload registers h as the handler of the upload method u on s, a service
// made with [ServiceOf] of u's service. h runs once per stream the host sends
// (registry.Upload), with the stream's params and an io.Reader of its bytes, while the
// chunks arrive: each chunk's call is answered once h has taken its bytes, so a slow
// h slows the host (at most the few chunks the host has in flight wait in memory). h's
// result or error is the reply to the last chunk, which the host returns; an error
// before the end is the reply to the first chunk whose bytes h did not take.
//
// The reader's Read fails when the host gives the stream up (a cancelled chunk, an
// abort, no chunk for the standard call deadline) or the connection ends; h's context
// is cancelled then too. h may return before the end of the stream: the remaining
// chunks are acknowledged and dropped.
func ImplementUpload[P, R any](s *Service, u *contract.Upload[P, R], h func(ctx context.Context, p P, r io.Reader) (R, error)) {
	if s.contract == nil || u.Service() != s.contract {
		s.problem = errors.Join(s.problem, foreignMethod(s, u.Name(), u.Service()))
		return
	}
	if h == nil {
		s.problem = errors.Join(s.problem, fmt.Errorf("method %q has a nil handler", u.Name()))
		return
	}
	t := &uploads[P, R]{h: h, streams: make(map[string]*upload[R])}
	handle(s, u.Name(), t.chunk, false)
}

// uploads are the streams of one upload method under way, by the host's stream name.
type uploads[P, R any] struct {
	h       func(ctx context.Context, p P, r io.Reader) (R, error)
	mu      sync.Mutex
	streams map[string]*upload[R]
}

// upload is one stream: its handler's goroutine reads the chunks' data from data, in
// order of seq, which next and turn enforce between the chunks' calls.
type upload[R any] struct {
	ctx    context.Context // the handler's
	cancel context.CancelCauseFunc
	data   chan []byte   // one chunk's bytes to the reader; closed after the last
	done   chan struct{} // closed when the handler returned, with result and err set
	result R
	err    error

	mu   sync.Mutex
	next int64         // the seq of the chunk whose turn it is
	turn chan struct{} // closed when next moves

	// Under uploads.mu: how many chunk calls arrived, and how many the stream has (0
	// until the last chunk arrived). The stream is forgotten once every chunk's call
	// arrived and one of them was answered, so that no chunk dispatched late finds the
	// name unknown and starts a second stream.
	arrived, total int64
}

// chunk is the handler of one chunk's call.
func (t *uploads[P, R]) chunk(ctx context.Context, c proto.UploadChunk[P]) (proto.UploadReply[R], error) {
	var none proto.UploadReply[R]
	st := t.stream(ctx, c)
	if st == nil {
		return none, nil
	}
	if c.Abort != "" {
		// The host aborts once every chunk's call it sent was answered.
		st.cancel(Errorf(wire.CodeAborted, "the host gave the upload up: %s", c.Abort))
		t.drop(c.Stream, st)
		return none, nil
	}
	defer t.answered(c.Stream, st)
	// Wait for this chunk's turn; once the handler returned, the order no longer matters.
	for {
		st.mu.Lock()
		next, turn := st.next, st.turn
		st.mu.Unlock()
		if next == c.Seq {
			break
		}
		if next > c.Seq {
			return none, Errorf(wire.CodeInvalid, "chunk %d of the stream was sent twice", c.Seq)
		}
		select {
		case <-turn:
		case <-st.done:
			if c.EOF {
				return t.last(st)
			}
			return none, t.failed(st)
		case <-ctx.Done():
			return none, t.abort(ctx, c.Stream, st)
		}
	}
	if c.Seq == 0 {
		t.start(c.Stream, st, c)
	}
	taken := false // the handler took the chunk's bytes: its call succeeded
	if len(c.Data) > 0 {
		select {
		case st.data <- c.Data:
			taken = true
		case <-st.done: // the handler returned without reading them
		case <-ctx.Done():
			return none, t.abort(ctx, c.Stream, st)
		}
	}
	if c.EOF {
		close(st.data)
	}
	st.mu.Lock()
	st.next++
	close(st.turn)
	st.turn = make(chan struct{})
	st.mu.Unlock()
	if !c.EOF {
		if taken || len(c.Data) == 0 {
			return none, nil
		}
		return none, t.failed(st) // not taken: the handler returned
	}
	select {
	case <-st.done:
	case <-ctx.Done():
		return none, t.abort(ctx, c.Stream, st)
	}
	return t.last(st)
}

// last is the reply to the last chunk of the stream st, whose handler returned: its
// result or error.
func (t *uploads[P, R]) last(st *upload[R]) (proto.UploadReply[R], error) {
	if st.err != nil {
		return proto.UploadReply[R]{}, st.err
	}
	return proto.UploadReply[R]{Result: &st.result}, nil
}

// stream returns the stream of chunk c, made on its first chunk to arrive (chunks may
// arrive in any order; the handler starts with chunk 0, see start); nil for the abort
// of a stream that is not under way.
func (t *uploads[P, R]) stream(ctx context.Context, c proto.UploadChunk[P]) *upload[R] {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.streams[c.Stream]
	if c.Abort != "" {
		return st
	}
	if st == nil {
		st = &upload[R]{data: make(chan []byte), done: make(chan struct{}), turn: make(chan struct{})}
		st.ctx, st.cancel = context.WithCancelCause(connContext(ctx))
		t.streams[c.Stream] = st
	}
	st.arrived++
	if c.EOF {
		st.total = c.Seq + 1
	}
	return st
}

// answered forgets the stream st named name once every chunk's call arrived.
func (t *uploads[P, R]) answered(name string, st *upload[R]) {
	t.mu.Lock()
	if st.total > 0 && st.arrived >= st.total && t.streams[name] == st {
		delete(t.streams, name)
	}
	t.mu.Unlock()
}

// start runs the handler of the stream st named name, on chunk 0's turn.
func (t *uploads[P, R]) start(name string, st *upload[R], c proto.UploadChunk[P]) {
	var p P
	if c.Params != nil {
		p = *c.Params
	}
	r := &chunkReader{ctx: st.ctx, cancel: st.cancel, data: st.data}
	go func() {
		defer func() {
			if v := recover(); v != nil {
				st.err = fmt.Errorf("panic: %v", v)
			}
			st.cancel(errHandlerReturned)
			close(st.done)
			// The host's last chunk normally forgets the stream; one that never comes
			// (the host went away between chunks) leaves it to this.
			time.AfterFunc(streamIdle, func() { t.drop(name, st) })
		}()
		st.result, st.err = t.h(st.ctx, p, r)
	}()
}

// errHandlerReturned ends a stream's context once its handler returned.
var errHandlerReturned = errors.New("plugin: the stream's handler returned")

// failed is the reply to a chunk of a stream whose handler returned before the end: its
// error, or nil (the chunk is dropped). The stream stays known, so that an earlier
// chunk whose call is dispatched after this one's gets the same answer rather than
// a new stream; the host's abort, its last chunk or streamIdle forgets it.
func (t *uploads[P, R]) failed(st *upload[R]) error {
	return st.err
}

// abort gives up the stream of a chunk whose call ended (the host cancelled it, or the
// connection ended) and returns the call's error. The stream stays known for the
// calls of its other chunks in flight, until the host's abort or streamIdle.
func (t *uploads[P, R]) abort(ctx context.Context, name string, st *upload[R]) error {
	st.cancel(context.Cause(ctx))
	time.AfterFunc(streamIdle, func() { t.drop(name, st) })
	return context.Cause(ctx)
}

// drop forgets the stream st of the given name.
func (t *uploads[P, R]) drop(name string, st *upload[R]) {
	t.mu.Lock()
	if t.streams[name] == st {
		delete(t.streams, name)
	}
	t.mu.Unlock()
}

// chunkReader is the io.Reader an upload's handler reads: the chunks' bytes in order.
type chunkReader struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	data   <-chan []byte
	buf    []byte
	eof    bool
}

// errUploadIdle gives up a stream whose next chunk did not come in time.
var errUploadIdle = Errorf(wire.CodeAborted, "upload given up: no chunk came for %v", streamIdle)

// Read returns the next bytes of the stream; io.EOF after the last chunk. It fails
// with the cause when the stream was given up.
func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		if err := context.Cause(r.ctx); err != nil {
			return 0, err
		}
		idle := afterIdle(func() { r.cancel(errUploadIdle) })
		select {
		case b, ok := <-r.data:
			r.buf, r.eof = b, !ok
		case <-r.ctx.Done():
		}
		idle.Stop()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}
