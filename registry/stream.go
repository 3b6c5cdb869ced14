package registry

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/runtime"
)

// Stream is a polled stream exposed as an io.ReadCloser: the protocol has no events, so
// streaming output such as console data is fetched by the host with waiting reads.
// adapterkit's convention for such a read method: its params identify the stream and
// say how much to return and how long to wait ({"max_bytes": N, "wait_ms": W} beside
// the stream's own members); it waits up to W milliseconds for data and returns
// {"data": BASE64, "eof": BOOL}: data is at most N bytes (possibly none), eof says no
// more will come. It is not safe for concurrent Reads; Close may be called
// concurrently with Read.
type Stream struct {
	ctx    context.Context
	cancel context.CancelCauseFunc // Close cancels with ErrStreamClosed
	read   func(ctx context.Context) (streamChunk, error)
	method string
	buf    []byte
	eof    bool

	closeOnce sync.Once
}

// Bounds of one read of a stream.
const (
	// streamChunkBytes is the most bytes one read asks for.
	streamChunkBytes = 64 << 10
	// streamWait is how long one read may wait in the adapter: well below the call
	// deadline.
	streamWait = time.Second
)

// NewStream opens a polled stream on c whose reads call the contract method read (a
// waiting read of the stream convention, see [Stream]) with the params that params
// returns for one read of at most maxBytes bytes waiting at most wait; params may ask
// for less, never for more. ctx bounds every read; Close ends the stream (the service's
// own method that frees the stream, if it has one, is the caller's to call). A nil ctx
// gives a stream whose reads fail with runtime.ErrNilContext.
func NewStream[P, R any](ctx context.Context, c *Client, read *contract.Method[P, R], params func(maxBytes int, wait time.Duration) P) *Stream {
	s := &Stream{method: read.Name()}
	s.read = func(ctx context.Context) (streamChunk, error) {
		var chunk streamChunk
		if read.Service() != c.svc {
			return chunk, notInService(c.svc, read.Name())
		}
		p, err := encodeParams(read.Name(), nil, params(streamChunkBytes, streamWait))
		if err != nil {
			return chunk, err
		}
		raw, err := c.h.Call(ctx, read.Name(), p)
		if err != nil {
			return chunk, err
		}
		if err := codec.DecodeValue(raw, &chunk, codec.IgnoreUnknown); err != nil {
			return chunk, &DecodeError{Method: read.Name(), Raw: raw, Err: err}
		}
		return chunk, nil
	}
	if ctx == nil { // every Read fails with the one nil-context error
		s.ctx, s.cancel = context.WithCancelCause(context.Background())
		s.cancel(runtime.ErrNilContext)
		return s
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s
}

type streamChunk struct {
	Data string `json:"data"`
	EOF  bool   `json:"eof"`
}

// ErrStreamClosed is returned by Read after Close (and by a Read that Close cut short).
// A Read stopped by the end of the stream's context returns the call's error instead
// (aborted or deadline, see runtime.CallError). errors.Is matches runtime.ErrClosed too.
var ErrStreamClosed = fmt.Errorf("registry: stream %w", runtime.ErrClosed)

// Read returns the next bytes of the stream, waiting for them as long as the stream's
// context allows; io.EOF once the adapter said eof and everything was read.
func (s *Stream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.eof {
			return 0, io.EOF
		}
		if s.closed() {
			return 0, ErrStreamClosed
		}
		if context.Cause(s.ctx) == runtime.ErrNilContext {
			return 0, runtime.ErrNilContext
		}
		chunk, err := s.read(s.ctx)
		if err != nil {
			if s.closed() {
				return 0, ErrStreamClosed
			}
			return 0, err
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Data)
		if err != nil {
			return 0, &DecodeError{Method: s.method, Err: fmt.Errorf("data is not base64: %w", err)}
		}
		if len(data) > streamChunkBytes {
			return 0, &DecodeError{Method: s.method, Err: fmt.Errorf("%d bytes returned, asked for at most %d", len(data), streamChunkBytes)}
		}
		s.buf, s.eof = data, chunk.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// closed reports whether Close ended the stream's context (rather than its parent).
func (s *Stream) closed() bool { return context.Cause(s.ctx) == ErrStreamClosed }

// Close ends the stream: a read under way is cancelled, and later reads fail with
// ErrStreamClosed.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() { s.cancel(ErrStreamClosed) })
	return nil
}
