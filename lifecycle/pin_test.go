package lifecycle_test

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
)

// copyExe copies the test binary into dir as name, with extra bytes appended (they
// change its digest, not what it does), and returns the path.
func copyExe(t *testing.T, dir, name string, extra string) string {
	t.Helper()
	b, err := os.ReadFile(self(t))
	if err != nil {
		t.Fatal(err)
	}
	if goruntime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, append(b, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The pin is checked at every start: a binary swapped for another before a restart is
// refused with a typed error (discovery.ErrDigestMismatch inside the restart's
// *OpenError), the adapter is not restarted, OnExit receives a further event whose
// Restart says why, and calls fail with ErrGaveUp and the same cause.
func TestPinCheckedAtRestart(t *testing.T) {
	dir := testkit.TempDir(t)
	path := copyExe(t, dir, "adapter", "")
	sum, err := digest.FileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan lifecycle.ExitEvent, 4)
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: path, Digest: sum, Env: env("normal"),
		OnExit: func(ev lifecycle.ExitEvent) { events <- ev }},
		lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("pinned adapter with its own digest: %v", err)
	}
	defer s.Close()

	// Replace the file the way an installer does: the running one renamed away (Windows
	// refuses to replace the file of a running program, not to rename it), a new file
	// renamed to the path.
	other := copyExe(t, dir, "other", "swapped")
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":3}`))

	var ended, refused lifecycle.ExitEvent
	for _, ev := range []*lifecycle.ExitEvent{&ended, &refused} {
		select {
		case *ev = <-events:
		case <-time.After(30 * time.Second):
			t.Fatal("no exit event")
		}
	}
	if ended.Restart != nil || ended.Cause == nil {
		t.Fatalf("first event: cause %v, restart %v; want the exit, no restart error", ended.Cause, ended.Restart)
	}
	if !errors.Is(refused.Restart, discovery.ErrDigestMismatch) || !strings.Contains(refused.Restart.Error(), "pinned "+sum) || !errors.Is(refused.Restart, lifecycle.ErrGaveUp) {
		t.Fatalf("second event's Restart = %v, want ErrGaveUp and a digest mismatch against the pin", refused.Restart)
	}
	if refused.Adapter != ended.Adapter || refused.Cause != ended.Cause {
		t.Fatal("the restart's event does not name the ending it follows")
	}
	var oe *lifecycle.OpenError
	if !errors.As(refused.Restart, &oe) || oe.Stage != lifecycle.StageSpawn {
		t.Fatalf("restart error %v: want an *OpenError at stage spawn", refused.Restart)
	}
	_, err = s.Call(ctxT(t), "test.proc.ok", nil)
	if !errors.Is(err, lifecycle.ErrGaveUp) || !errors.Is(err, discovery.ErrDigestMismatch) {
		t.Fatalf("call after the refused restart = %v", err)
	}
	if s.Current() != nil || s.Stats().Restarts != 1 {
		t.Fatalf("current %v, restarts %d: want none running after one refused restart", s.Current(), s.Stats().Restarts)
	}
}

// Config.Admit is asked before every start: refused at the first start, Open fails
// at stage spawn with its error and nothing runs; refused at a restart, the adapter
// is not restarted and calls fail with ErrGaveUp and the same error.
func TestAdmitAskedAtEveryStart(t *testing.T) {
	errNo := errors.New("not admitted")
	_, err := lifecycle.Open(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"), Admit: func() error { return errNo }})
	var oe *lifecycle.OpenError
	if !errors.As(err, &oe) || oe.Stage != lifecycle.StageSpawn || !errors.Is(err, errNo) {
		t.Fatalf("Open refused by Admit = %v, want an *OpenError at stage spawn", err)
	}

	var refuse atomic.Bool
	asked := atomic.Int32{}
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"), Admit: func() error {
		asked.Add(1)
		if refuse.Load() {
			return errNo
		}
		return nil
	}}, lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refuse.Store(true)
	pid := s.Current().Pid()
	_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":3}`))
	testkit.Within(30*time.Second, func() bool {
		_, err = s.Call(ctxT(t), "test.proc.ping", nil)
		return errors.Is(err, lifecycle.ErrGaveUp)
	})
	if !errors.Is(err, lifecycle.ErrGaveUp) || !errors.Is(err, errNo) {
		t.Fatalf("call after a refused restart: %v", err)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("Admit asked %d times, want 2 (the start and the restart)", n)
	}
	goneNow(t, pid)
}
