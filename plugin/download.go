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
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// ImplementDownload registers h as the handler of the download method d on s, a
// service made with [ServiceOf] of d's service. h runs once per stream the host opens
// (registry.Download), with the stream's params, and writes the stream's bytes to w;
// returning nil ends the stream, an error is the reply to the host's read then under
// way, after the bytes written before it. The host reads with waiting reads (the
// convention of registry.Stream), each answered with the bytes written so far (up to
// the read's max_bytes); w's Write blocks while about two reads' worth wait for the
// host, so a slow host slows h.
//
// Write fails, and h's context is cancelled, when the host closes the stream, cancels
// a read, makes no read for the standard call deadline, or the connection ends.
func ImplementDownload[P any](s *Service, d *contract.Download[P], h func(ctx context.Context, p P, w io.Writer) error) {
	if s.contract == nil || d.Service() != s.contract {
		s.problem = errors.Join(s.problem, foreignMethod(s, d.Name(), d.Service()))
		return
	}
	if h == nil {
		s.problem = errors.Join(s.problem, fmt.Errorf("method %q has a nil handler", d.Name()))
		return
	}
	t := &downloads[P]{h: h, max: proto.ChunkBytes(d.Name()), streams: make(map[string]*download)}
	handle(s, d.Name(), t.read, false)
}

// downloads are the streams of one download method under way, by the host's name.
type downloads[P any] struct {
	h       func(ctx context.Context, p P, w io.Writer) error
	max     int // the most bytes one read returns
	mu      sync.Mutex
	streams map[string]*download
}

// download is one stream: the bytes its handler wrote that no read took yet.
type download struct {
	ctx    context.Context // the handler's
	cancel context.CancelCauseFunc
	idle   *time.Timer // gives the stream up when no read came for streamIdle
	limit  int         // Write waits while buf holds this much

	mu     sync.Mutex
	buf    []byte
	done   bool          // the handler returned
	err    error         // its error
	change chan struct{} // closed when buf or done changed
}

// errDownloadClosed ends a stream the host closed.
var errDownloadClosed = Errorf(wire.CodeAborted, "the host closed the download")

// errDownloadIdle gives up a stream whose next read did not come in time.
var errDownloadIdle = Errorf(wire.CodeAborted, "download given up: no read came for %v", streamIdle)

// read is the handler of one waiting read.
func (t *downloads[P]) read(ctx context.Context, r proto.DownloadRead[P]) (proto.DownloadChunk, error) {
	none := proto.DownloadChunk{Data: []byte{}}
	if r.MaxBytes <= 0 || r.WaitMS < 0 {
		return none, Errorf(wire.CodeInvalid, "max_bytes must be above 0 and wait_ms at least 0")
	}
	st := t.stream(ctx, r)
	if r.Close {
		if st != nil {
			st.cancel(errDownloadClosed)
			t.drop(r.Stream, st)
		}
		return proto.DownloadChunk{Data: []byte{}, EOF: true}, nil
	}
	st.idle.Reset(streamIdle)
	wait := time.Duration(r.WaitMS) * time.Millisecond
	wait = min(wait, limits.CallDeadline/2)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		st.mu.Lock()
		if len(st.buf) > 0 || st.done {
			break
		}
		change := st.change
		st.mu.Unlock()
		select {
		case <-change:
		case <-timer.C:
			return none, nil // nothing yet: an empty chunk
		case <-ctx.Done():
			st.cancel(context.Cause(ctx))
			t.drop(r.Stream, st)
			return none, context.Cause(ctx)
		}
	}
	defer st.mu.Unlock()
	n := min(len(st.buf), r.MaxBytes, t.max)
	data := make([]byte, n)
	copy(data, st.buf)
	st.buf = st.buf[:copy(st.buf, st.buf[n:])]
	st.signal()
	if !st.done || len(st.buf) > 0 {
		return proto.DownloadChunk{Data: data}, nil
	}
	if st.err == nil {
		t.drop(r.Stream, st)
		return proto.DownloadChunk{Data: data, EOF: true}, nil
	}
	// The handler failed: its last bytes go first, its error is the reply to the read
	// after them.
	if n > 0 {
		return proto.DownloadChunk{Data: data}, nil
	}
	t.drop(r.Stream, st)
	return none, st.err
}

// stream returns the stream read r names, starting it (its handler) on its first read;
// nil for the close of a stream that is not under way.
func (t *downloads[P]) stream(ctx context.Context, r proto.DownloadRead[P]) *download {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.streams[r.Stream]; st != nil || r.Close {
		return st
	}
	st := &download{limit: 2 * t.max, change: make(chan struct{})}
	st.ctx, st.cancel = context.WithCancelCause(connContext(ctx))
	name := r.Stream
	st.idle = time.AfterFunc(streamIdle, func() {
		st.cancel(errDownloadIdle)
		t.drop(name, st)
	})
	t.streams[name] = st
	var p P
	if r.Params != nil {
		p = *r.Params
	}
	go func() {
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v", v)
			}
			st.mu.Lock()
			st.done, st.err = true, err
			st.signal()
			st.mu.Unlock()
			st.cancel(errHandlerReturned)
		}()
		err = t.h(st.ctx, p, (*downloadWriter)(st))
	}()
	return st
}

// drop forgets the stream st of the given name.
func (t *downloads[P]) drop(name string, st *download) {
	t.mu.Lock()
	if t.streams[name] == st {
		delete(t.streams, name)
		st.idle.Stop()
	}
	t.mu.Unlock()
}

// signal wakes the reads and writes waiting for a change; st.mu is held.
func (st *download) signal() {
	close(st.change)
	st.change = make(chan struct{})
}

// downloadWriter is the io.Writer a download's handler writes to.
type downloadWriter download

// Write adds p to the bytes waiting for the host's reads, waiting while the buffer is
// full; it fails with the cause once the stream was given up.
func (w *downloadWriter) Write(p []byte) (int, error) {
	st := (*download)(w)
	written := 0
	for len(p) > 0 {
		if err := context.Cause(st.ctx); err != nil {
			return written, err
		}
		st.mu.Lock()
		room := st.limit - len(st.buf)
		if room > 0 {
			k := min(room, len(p))
			if st.buf == nil {
				st.buf = make([]byte, 0, st.limit)
			}
			st.buf = append(st.buf, p[:k]...)
			p, written = p[k:], written+k
			st.signal()
			st.mu.Unlock()
			continue
		}
		change := st.change
		st.mu.Unlock()
		select {
		case <-change:
		case <-st.ctx.Done():
			return written, context.Cause(st.ctx)
		}
	}
	return written, nil
}
