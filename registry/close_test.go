//go:build linux

package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/registry"
)

// R63: Close while an Open is under way (here: an adapter that never answers
// initialize) ends that open too, and returns only when its tree is gone and its
// package directory released; the Open fails with ErrClosed.
func TestCloseWhileOpening(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "silent")
	// Started without a shell (R61): the shebang runs it; it never answers initialize.
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := registry.New(nil)
	opened := make(chan error, 1)
	go func() {
		h, err := r.Open(context.Background(), path, nil) // only the call deadline bounds it
		if h != nil {
			_ = h.Close()
		}
		opened <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.Reservations().Reserved()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the open never started")
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Reservations().CanRelease(dir); err != nil {
		t.Fatalf("Close returned while an adapter being opened may still run: %v", err)
	}
	select {
	case err := <-opened:
		if !errors.Is(err, registry.ErrClosed) {
			t.Fatalf("Open = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open did not end after Close")
	}
}
