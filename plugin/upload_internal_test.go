package plugin

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// The host has up to two chunks of an upload in flight, and the adapter dispatches
// each call on its own goroutine, so a chunk's call may reach ImplementUpload's handler
// after the next chunk's was answered. Such a late chunk gets the stream's answer (the
// handler's error, or its acknowledgement) and never a second, empty stream that waits
// for a chunk 0 that will not come. Fake time: a hang shows as the calls' deadline.
func TestUploadChunkDispatchedLate(t *testing.T) {
	boom := Errorf(wire.CodeFailed, "boom")
	for _, c := range []struct {
		name string
		h    func(context.Context, struct{}, io.Reader) (int64, error)
		// The chunks' calls after chunk 0's, in the order they are dispatched, and
		// each one's wanted answer.
		calls []proto.UploadChunk[struct{}]
		want  []error
		// wantResult is the last chunk's result, when one of calls is the last.
		wantResult int64
		abort      bool // the host aborts the stream after its calls (it failed)
	}{
		{
			name: "the handler failed: chunk 2 answered before chunk 1",
			h: func(_ context.Context, _ struct{}, r io.Reader) (int64, error) {
				_, _ = io.ReadFull(r, make([]byte, 1))
				return 0, boom
			},
			calls: []proto.UploadChunk[struct{}]{{Seq: 2, Data: []byte("c")}, {Seq: 1, Data: []byte("b")}},
			want:  []error{boom, boom},
			abort: true,
		},
		{
			name: "the handler returned early: the last chunk answered before chunk 1",
			h: func(context.Context, struct{}, io.Reader) (int64, error) {
				return 42, nil
			},
			calls:      []proto.UploadChunk[struct{}]{{Seq: 2, Data: []byte("c"), EOF: true}, {Seq: 1, Data: []byte("b")}},
			want:       []error{nil, nil},
			wantResult: 42,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				up := &uploads[struct{}, int64]{h: c.h, streams: make(map[string]*upload[int64])}
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				if _, err := up.chunk(ctx, proto.UploadChunk[struct{}]{Stream: "s", Data: []byte("a")}); err != nil {
					t.Fatalf("chunk 0: %v", err)
				}
				synctest.Wait() // the handler returned
				for i, call := range c.calls {
					call.Stream = "s"
					reply, err := up.chunk(ctx, call)
					if !errors.Is(err, c.want[i]) || err == nil && c.want[i] != nil {
						t.Fatalf("chunk %d: %v, want %v", call.Seq, err, c.want[i])
					}
					if call.EOF && (reply.Result == nil || *reply.Result != c.wantResult) {
						t.Fatalf("chunk %d (the last): result %v, want %d", call.Seq, reply.Result, c.wantResult)
					}
				}
				if c.abort {
					if _, err := up.chunk(ctx, proto.UploadChunk[struct{}]{Stream: "s", Abort: "failed"}); err != nil {
						t.Fatalf("abort: %v", err)
					}
				}
				up.mu.Lock()
				left := len(up.streams)
				up.mu.Unlock()
				if left != 0 {
					t.Fatalf("%d streams still known after every chunk was answered", left)
				}
			})
		})
	}
}
