//go:build linux

package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
)

// R63: Close while an Open is under way (here: an adapter that never answers
// initialize) ends that open too, and returns only when its tree is gone and its
// package directory released; the Open fails with ErrClosed. That the tree is gone is
// checked in /proc: the adapter records its host-side pid (the shell reads
// /proc/self/stat itself, and /proc is the host's even in a PID namespace), then
// becomes `sleep 1000`.
func TestCloseWhileOpening(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "silent")
	pidfile := filepath.Join(t.TempDir(), "pid")
	// Started without a shell (R61): the shebang runs it; it never answers initialize.
	script := "#!/bin/sh\nread -r pid rest < /proc/self/stat\necho $pid > " + pidfile + ".tmp\nmv " +
		pidfile + ".tmp " + pidfile + "\nexec sleep 1000\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
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
	var pid int
	testkit.Eventually(t, 10*time.Second, func() bool {
		if b, err := os.ReadFile(pidfile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return pid > 0 && testkit.Running(pid) && len(r.Reservations().Reserved()) > 0
	}, "the open never started")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	testkit.Gone(t, pid) // the tree ended when Close returned, seen from /proc
	if err := r.Reservations().CanRelease(dir); err != nil {
		t.Fatalf("Close returned while an adapter being opened may still run: %v", err)
	}
	select {
	case err := <-opened:
		if !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Open = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open did not end after Close")
	}
}
