package registry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// A Stream's Read says why it stopped: runtime.ErrClosed only after Close, and the
// context's own error (aborted) when the caller's context ended. The echo method
// answers every read with no data and no eof, so Read keeps polling until stopped.
func TestStreamReadStopCauses(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, echo := bindOne[map[string]any, map[string]any](t, h, "echo")
	noParams := func(int, time.Duration) map[string]any { return map[string]any{} }

	t.Run("caller's context cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctxT(t))
		st := registry.NewStream(ctx, c, echo, noParams)
		defer st.Close()
		done := make(chan error, 1)
		go func() {
			_, err := st.Read(make([]byte, 8))
			done <- err
		}()
		cancel()
		err := <-done
		if errors.Is(err, runtime.ErrClosed) || runtime.CodeOf(err) != wire.CodeAborted || !errors.Is(err, context.Canceled) {
			t.Fatalf("Read after the caller's cancel = %v, want aborted (context canceled), not closed", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		st := registry.NewStream(ctxT(t), c, echo, noParams)
		done := make(chan error, 1)
		go func() {
			_, err := st.Read(make([]byte, 8))
			done <- err
		}()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Read racing Close = %v, want runtime.ErrClosed", err)
		}
		if _, err := st.Read(make([]byte, 8)); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Read after Close = %v, want runtime.ErrClosed", err)
		}
	})
}

// A stream reads through its contract method with the params its function builds: the
// echo method returns them, which carry no data and no eof, so the stream asked for
// the bounds it passes (64 KiB, 1 s) is seen by an adapter that checks them.
func TestStreamParams(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, read := bindOne[streamParams, map[string]any](t, h, "echo")
	var got []streamParams
	ctx, cancel := context.WithCancel(ctxT(t))
	st := registry.NewStream(ctx, c, read, func(n int, wait time.Duration) streamParams {
		p := streamParams{Session: 7, MaxBytes: n, WaitMS: wait.Milliseconds()}
		if got = append(got, p); len(got) == 3 {
			cancel()
		}
		return p
	})
	defer st.Close()
	if _, err := st.Read(make([]byte, 8)); runtime.CodeOf(err) != wire.CodeAborted {
		t.Fatalf("Read = %v, want aborted after the third read", err)
	}
	if len(got) < 3 || got[0] != (streamParams{Session: 7, MaxBytes: 64 << 10, WaitMS: 1000}) {
		t.Fatalf("params %+v", got)
	}
	// A method of another service than the client's is refused before anything is sent.
	other := contract.NewMethod[streamParams, map[string]any](contract.NewService("example.other", 1), "read")
	bad := registry.NewStream(ctxT(t), c, other, func(int, time.Duration) streamParams { return streamParams{} })
	if _, err := bad.Read(make([]byte, 8)); !errors.Is(err, registry.ErrNotInService) || !runtime.IsNeverStarted(err) {
		t.Fatalf("Read of another service's method = %v", err)
	}
}

type streamParams struct {
	Session  int64 `json:"session"`
	MaxBytes int   `json:"max_bytes"`
	WaitMS   int64 `json:"wait_ms"`
}
