package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/proto"
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
	cancel context.CancelCauseFunc // Close cancels with errStreamClosed
	read   func(ctx context.Context) ([]byte, bool, error)
	method string
	max    int // the most bytes one read may return
	buf    []byte
	eof    bool

	// A download's (see Download): its reads' errors are *ChunkError naming the chunk
	// (index, offset) that failed, and Close tells the adapter.
	download      bool
	index, offset int64
	ended         atomic.Bool // io.EOF or a failure was returned: the adapter forgot it
	close         func()

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
	return newStream(ctx, read.Name(), streamChunkBytes, func(ctx context.Context) ([]byte, bool, error) {
		var chunk streamChunk
		raw, err := streamCall(ctx, c, read.Service(), read.Name(), params(streamChunkBytes, streamWait))
		if err != nil {
			return nil, false, err
		}
		if err := codec.DecodeValue(raw, &chunk, codec.IgnoreUnknown); err != nil {
			return nil, false, &DecodeError{Method: read.Name(), Raw: raw, Err: err}
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Data)
		if err != nil {
			return nil, false, &DecodeError{Method: read.Name(), Err: fmt.Errorf("data is not base64: %w", err)}
		}
		return data, chunk.EOF, nil
	})
}

// Download opens the stream that the download method d (contract.NewDownload) of c's
// service gives for the params p, as an io.ReadCloser whose reads are waiting reads
// of d, each returning a chunk that fills a frame (about 3 MiB); the adapter's handler
// writes ahead of them by about two chunks, no more. ctx bounds every read.
//
// A read that fails is a *ChunkError naming the chunk (its index, and the offset of its
// first byte) and wrapping the call's error; the adapter's handler failing mid-stream
// is one, after the bytes it wrote before. Close before the end tells the adapter,
// whose handler then stops; after io.EOF or a failure it has nothing to tell. A method
// of another service than c's fails at the first Read, before anything is sent.
func Download[P any](ctx context.Context, c *Client, d *contract.Download[P], p P) *Stream {
	name := streamName()
	max := proto.ChunkBytes(d.Name())
	var started atomic.Bool // a read reached the adapter, which started the stream
	s := newStream(ctx, d.Name(), max, func(ctx context.Context) ([]byte, bool, error) {
		read := proto.DownloadRead[P]{Stream: name, MaxBytes: max, WaitMS: streamWait.Milliseconds()}
		if !started.Load() {
			read.Params = &p
		}
		raw, err := streamCall(ctx, c, d.Service(), d.Name(), read)
		if err != nil {
			return nil, false, err
		}
		started.Store(true)
		var chunk proto.DownloadChunk
		if err := codec.DecodeValue(raw, &chunk, codec.IgnoreUnknown); err != nil {
			return nil, false, &DecodeError{Method: d.Name(), Raw: raw, Err: err}
		}
		return chunk.Data, chunk.EOF, nil
	})
	s.download = true
	s.close = func() {
		if !started.Load() {
			return // never started: the adapter knows nothing of it
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), abortWait)
		defer cancel()
		_, _ = streamCall(actx, c, d.Service(), d.Name(), proto.DownloadRead[P]{Stream: name, MaxBytes: 1, Close: true})
	}
	return s
}

// newStream returns a stream on ctx of the method named method whose reads are
// read's, each returning at most max bytes.
func newStream(ctx context.Context, method string, max int, read func(ctx context.Context) ([]byte, bool, error)) *Stream {
	s := &Stream{method: method, max: max, read: read}
	if ctx == nil { // every Read fails with the one nil-context error
		s.ctx, s.cancel = context.WithCancelCause(context.Background())
		s.cancel(runtime.ErrNilContext)
		return s
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	return s
}

// streamCall makes one read of a stream: the call of method (of the contract svc) with
// the params p, on c.
func streamCall(ctx context.Context, c *Client, svc *contract.Service, method string, p any) (json.RawMessage, error) {
	if svc != c.svc {
		return nil, notInService(c.svc, svc, method)
	}
	params, err := encodeParams(method, nil, p)
	if err != nil {
		return nil, err
	}
	return c.h.Call(ctx, method, params)
}

type streamChunk struct {
	Data string `json:"data"`
	EOF  bool   `json:"eof"`
}

// errStreamClosed is returned by Read after Close (and by a Read that Close cut short).
// A Read stopped by the end of the stream's context returns the call's error instead
// (aborted or deadline, see runtime.CallError). errors.Is matches runtime.ErrClosed too.
var errStreamClosed = fmt.Errorf("registry: stream %w", runtime.ErrClosed)

// Read returns the next bytes of the stream, waiting for them as long as the stream's
// context allows; io.EOF once the adapter said eof and everything was read. After Close
// (or when Close cut it short) it returns an error matching runtime.ErrClosed; stopped
// by the end of the stream's context, the call's error (aborted or deadline).
func (s *Stream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.eof {
			return 0, io.EOF
		}
		if s.closed() {
			return 0, errStreamClosed
		}
		if context.Cause(s.ctx) == runtime.ErrNilContext {
			return 0, runtime.ErrNilContext
		}
		data, eof, err := s.read(s.ctx)
		if err == nil && len(data) > s.max {
			err = &DecodeError{Method: s.method, Err: fmt.Errorf("%d bytes returned, asked for at most %d", len(data), s.max)}
		}
		if err != nil {
			if s.closed() {
				return 0, errStreamClosed
			}
			if s.download {
				s.ended.Store(true)
				return 0, &ChunkError{Method: s.method, Index: s.index, Offset: s.offset, Err: err}
			}
			return 0, err
		}
		s.buf, s.eof = data, eof
		if eof {
			s.ended.Store(true)
		}
		if len(data) > 0 {
			s.index++
			s.offset += int64(len(data))
		}
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// closed reports whether Close ended the stream's context (rather than its parent).
func (s *Stream) closed() bool { return context.Cause(s.ctx) == errStreamClosed }

// Close ends the stream: a read under way is cancelled, and later reads fail with
// errStreamClosed. A download's Close before its end also tells the adapter, waiting
// at most a second for its answer.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.cancel(errStreamClosed)
		if s.close != nil && !s.ended.Load() {
			s.close()
		}
	})
	return nil
}
