//go:build linux

package registry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

// A Stream's Read says why it stopped: ErrStreamClosed only after Close, and the
// context's own error (aborted) when the caller's context ended. The echo method
// answers every read with no data and no eof, so Read keeps polling until stopped.
func TestStreamReadStopCauses(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	t.Run("caller's context cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctxT(t))
		st := h.Stream(ctx, registry.StreamOptions{Read: "example.echo.echo"})
		defer st.Close()
		done := make(chan error, 1)
		go func() {
			_, err := st.Read(make([]byte, 8))
			done <- err
		}()
		cancel()
		err := <-done
		if errors.Is(err, registry.ErrStreamClosed) || !(runtime.CodeOf(err) == wire.CodeAborted) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Read after the caller's cancel = %v, want aborted (context canceled), not ErrStreamClosed", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		st := h.Stream(ctxT(t), registry.StreamOptions{Read: "example.echo.echo"})
		done := make(chan error, 1)
		go func() {
			_, err := st.Read(make([]byte, 8))
			done <- err
		}()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, registry.ErrStreamClosed) {
			t.Fatalf("Read racing Close = %v, want ErrStreamClosed", err)
		}
		if _, err := st.Read(make([]byte, 8)); !errors.Is(err, registry.ErrStreamClosed) {
			t.Fatalf("Read after Close = %v, want ErrStreamClosed", err)
		}
	})
}

// A stream without Params still calls its Close method (with an empty object).
func TestStreamCloseWithoutParams(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	st := h.Stream(ctxT(t), registry.StreamOptions{Read: "example.echo.echo", Close: "example.echo.echo"})
	if err := st.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}
