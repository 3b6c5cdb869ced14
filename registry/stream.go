package registry

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/runtime"
)

// StreamOptions describe a polled stream: the protocol has no events (R15), so
// streaming output such as console data is fetched by the host with waiting reads
// (A34). adapterkit's convention for such a read method: it takes the stream's Params
// plus {"max_bytes": N, "wait_ms": W}, waits up to W milliseconds for data, and returns
// {"data": BASE64, "eof": BOOL}: data is at most N bytes (possibly none), eof says no
// more will come.
type StreamOptions struct {
	// Read is the waiting-read method.
	Read string
	// Close, if set, is called with Params when the stream is closed, within the
	// console close bound (3 s, R44).
	Close string
	// Params identify the stream (e.g. {"session": 7}); nil is an empty object.
	Params map[string]any
	// Wait is how long one read may wait in the adapter; default 1 s. It must stay
	// well below the call deadline.
	Wait time.Duration
	// MaxBytes is the most bytes one read returns; default 64 KiB.
	MaxBytes int
}

// Stream is a polled stream exposed as an io.ReadCloser. It is not safe for
// concurrent Reads; Close may be called concurrently with Read.
type Stream struct {
	h      *Handle
	opts   StreamOptions
	ctx    context.Context
	cancel context.CancelCauseFunc // Close cancels with ErrStreamClosed
	buf    []byte
	eof    bool

	closeOnce sync.Once
	closeErr  error
}

// Stream opens a polled stream on h. ctx bounds every read; Close ends it. A nil ctx
// gives a stream whose reads fail with runtime.ErrNilContext.
func (h *Handle) Stream(ctx context.Context, opts StreamOptions) *Stream {
	if opts.Wait <= 0 {
		opts.Wait = time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 64 << 10
	}
	opts.Params = maps.Clone(opts.Params)
	if opts.Params == nil { // a nil map encodes to null, which is not params
		opts.Params = map[string]any{}
	}
	s := &Stream{h: h, opts: opts}
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
		params := make(map[string]any, len(s.opts.Params)+2)
		maps.Copy(params, s.opts.Params)
		params["max_bytes"] = s.opts.MaxBytes
		params["wait_ms"] = s.opts.Wait.Milliseconds()
		var chunk streamChunk
		if err := s.h.invoke(s.ctx, s.opts.Read, params, &chunk); err != nil {
			if s.closed() {
				return 0, ErrStreamClosed
			}
			return 0, err
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Data)
		if err != nil {
			return 0, &DecodeError{Method: s.opts.Read, Err: fmt.Errorf("data is not base64: %w", err)}
		}
		if len(data) > s.opts.MaxBytes {
			return 0, &DecodeError{Method: s.opts.Read, Err: fmt.Errorf("%d bytes returned, asked for at most %d", len(data), s.opts.MaxBytes)}
		}
		s.buf, s.eof = data, chunk.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// closed reports whether Close ended the stream's context (rather than its parent).
func (s *Stream) closed() bool { return context.Cause(s.ctx) == ErrStreamClosed }

// Close ends the stream: a read under way is cancelled, and the Close method (if any)
// is called within the console close bound.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.cancel(ErrStreamClosed)
		if s.opts.Close == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.h.reg.cfg.Limits.Console())
		defer cancel()
		s.closeErr = s.h.invoke(ctx, s.opts.Close, s.opts.Params, nil)
	})
	return s.closeErr
}

// invoke is the stream's call: params (the stream's map) are encoded as a JSON object
// and the result decoded into result (a pointer; nil discards it) with package codec,
// unknown members ignored. Params that do not encode fail before anything is sent, as
// a typed call's do; a result that does not decode is a *DecodeError.
func (h *Handle) invoke(ctx context.Context, method string, params, result any) error {
	p, err := encodeParams(method, nil, params)
	if err != nil {
		return err
	}
	raw, err := h.Call(ctx, method, p)
	if err != nil || result == nil {
		return err
	}
	if err := codec.DecodeValue(raw, result, codec.IgnoreUnknown); err != nil {
		return &DecodeError{Method: method, Raw: raw, Err: err}
	}
	return nil
}
