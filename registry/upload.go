package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/internal/jsoncodec"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
)

// ChunkError is the failure of one chunk of a stream ([Upload], [Download]): the
// chunk's place in the stream (Index, from 0) and the offset of its first byte, and
// the cause: the call's error (a *runtime.CallError, or a *DecodeError), or for an
// upload the source's read error.
type ChunkError struct {
	Method string
	Index  int64
	Offset int64
	Err    error
}

// Error is one line, e.g.
// `registry: example.blobs.put: chunk 3 at offset 9436416: failed: disk full`.
func (e *ChunkError) Error() string {
	return fmt.Sprintf("registry: %s: chunk %d at offset %d: %v", e.Method, e.Index, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *ChunkError) Unwrap() error { return e.Err }

// uploadWindow is how many chunks of an upload are in flight at most: the adapter
// decodes the next while its handler reads one, and the host holds no more.
const uploadWindow = 2

// abortWait bounds the call that tells an adapter a stream was given up.
const abortWait = time.Second

// Upload sends the bytes of src, with the params p, through the upload method u
// (contract.NewUpload) of c's service, and returns the handler's result. The bytes go
// as an ordered sequence of calls of u, each carrying a chunk that fills a frame
// (about 3 MiB), at most two in flight: the adapter answers a chunk once its handler
// took it, so a slow handler slows Upload, and memory stays bounded whatever src's
// size. ctx bounds the whole stream.
//
// A chunk that fails ends the upload with a *ChunkError naming it and wrapping the
// call's error (or src's read error); the adapter is told to give the stream up. A
// method of another service than c's fails before anything is sent.
func Upload[P, R any](ctx context.Context, c *Client, u *contract.Upload[P, R], p P, src io.Reader) (R, error) {
	var zero R
	if ctx == nil {
		return zero, runtime.ErrNilContext
	}
	if u.Service() != c.svc {
		return zero, notInService(c.svc, u.Service(), u.Name())
	}
	up := &uploader[P]{c: c, name: u.Name(), stream: streamName()}
	raw, err := up.run(ctx, p, src)
	if err != nil {
		return zero, err
	}
	var reply proto.UploadReply[R]
	if err := codec.DecodeValue(raw, &reply, codec.IgnoreUnknown); err != nil {
		return zero, &DecodeError{Method: up.name, Raw: raw, Err: err}
	}
	if reply.Result == nil {
		return zero, &DecodeError{Method: up.name, Raw: raw, Err: errors.New("the last chunk's reply has no result")}
	}
	return *reply.Result, nil
}

// uploader is one upload under way.
type uploader[P any] struct {
	c      *Client
	name   string
	stream string
}

// sent is the outcome of one chunk's call.
type sent struct {
	index, offset int64
	eof           bool // the last chunk: raw is the stream's result
	raw           json.RawMessage
	err           error
}

// run sends the chunks and returns the last one's result.
func (up *uploader[P]) run(ctx context.Context, p P, src io.Reader) (json.RawMessage, error) {
	callCtx, cancelCalls := context.WithCancelCause(ctx)
	cancel := func() { cancelCalls(errUploadFailed) }
	defer cancel()
	done := make(chan sent, uploadWindow)
	inFlight := 0
	started := false // a chunk was sent: the adapter may know the stream
	// Each chunk's call has its own cancel, so that a chunk's failure ends the calls
	// of the chunks after it and leaves those before it to their answers.
	chunkCancels := make(map[int64]context.CancelCauseFunc, uploadWindow)
	var failed *ChunkError
	var last json.RawMessage
	// settle waits for one call in flight. The upload's failure is that of the first
	// chunk that failed, by index: the adapter may answer a later chunk in flight first
	// (both fail once its handler returned), so that failure cancels the later chunks
	// only; an earlier one in flight is either taken by the handler or answered with
	// its failure, which replaces the later one's.
	settle := func() {
		s := <-done
		inFlight--
		chunkCancels[s.index](nil)
		delete(chunkCancels, s.index)
		if s.err != nil && (failed == nil || s.index < failed.Index && !errors.Is(s.err, errUploadFailed)) {
			err := s.err
			if cerr := context.Cause(ctx); cerr != nil && !errors.Is(err, cerr) {
				// The caller's context ended, and the adapter's answer to the cancel came
				// before the call saw it: the upload still ended because of the context.
				err = fmt.Errorf("%w: %w", cerr, err)
			}
			failed = &ChunkError{Method: up.name, Index: s.index, Offset: s.offset, Err: err}
			for i, cancelChunk := range chunkCancels {
				if i > s.index {
					cancelChunk(errUploadFailed)
				}
			}
		}
		if s.err == nil && s.eof {
			last = s.raw
		}
	}
	params, err := appendObject(nil, p)
	if err != nil {
		return nil, &ChunkError{Method: up.name, Err: &runtime.CallError{Method: up.name, Message: "the params do not encode", NeverStarted: true, Cause: err}}
	}
	data := make([]byte, proto.ChunkBytes(up.name))
	valid := jsoncodec.WritesValid(reflect.TypeFor[proto.UploadChunk[P]]())
	var offset int64
	for index := int64(0); failed == nil; index++ {
		size := len(data)
		chunk := proto.UploadChunk[P]{Stream: up.stream, Seq: index, Offset: offset}
		if index == 0 {
			// The first chunk carries the params: its data fills the rest of the frame.
			chunk.Params = &p
			size = max(0, len(data)-(len(params)+3)/4*3)
		}
		n, rerr := io.ReadFull(src, data[:size])
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			chunk.EOF = true
		case rerr != nil:
			failed = &ChunkError{Method: up.name, Index: index, Offset: offset, Err: fmt.Errorf("reading the stream: %w", rerr)}
			cancel()
			continue
		}
		chunk.Data = data[:n]
		for inFlight == uploadWindow {
			settle()
		}
		if failed != nil {
			break
		}
		// The encoded chunk is lent to the connection with its pooled buffer, as
		// Call lends large params: written from there, not copied nor checked again.
		buf := bufpool.Get()
		body, err := appendObject(bufpool.Reserve(*buf, limits.MaxFrameSize), chunk)
		if err != nil {
			bufpool.Put(buf)
			failed = &ChunkError{Method: up.name, Index: index, Offset: offset, Err: err}
			break
		}
		*buf = body
		inFlight, started = inFlight+1, true
		chunkCtx, cancelChunk := context.WithCancelCause(callCtx)
		chunkCancels[index] = cancelChunk
		go func(index, offset int64, eof bool) {
			var raw json.RawMessage
			var err error
			if up.c.hd != nil {
				req := handover.Request{Method: up.name, Params: body, Lease: handover.Lend(buf), Valid: valid}
				raw, err = up.c.hd.Do(chunkCtx, &req)
				req.Lease.Release()
			} else {
				raw, err = up.c.h.Call(chunkCtx, up.name, body)
				bufpool.Put(buf)
			}
			done <- sent{index: index, offset: offset, eof: eof, raw: raw, err: err}
		}(index, offset, chunk.EOF)
		offset += int64(n)
		if chunk.EOF {
			break
		}
	}
	for inFlight > 0 {
		settle()
	}
	if failed != nil {
		if started {
			up.abort(ctx, failed)
		}
		return nil, failed
	}
	return last, nil
}

// errUploadFailed is the cause of the calls of chunks still in flight when an earlier
// or later chunk failed.
var errUploadFailed = errors.New("registry: another chunk of the upload failed")

// abort tells the adapter that the stream was given up, so that its handler stops
// now rather than when it waits too long for the next chunk. Best effort, bounded by
// abortWait: the adapter already gave the stream up when a chunk's call was cancelled.
func (up *uploader[P]) abort(ctx context.Context, failed *ChunkError) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortWait)
	defer cancel()
	body, err := appendObject(nil, proto.UploadChunk[struct{}]{Stream: up.stream, Seq: failed.Index, Abort: failed.Err.Error()})
	if err == nil {
		_, _ = up.c.h.Call(actx, up.name, body)
	}
}

// streamName returns a new stream's name: random, so that no two streams of a
// connection share one.
func streamName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
