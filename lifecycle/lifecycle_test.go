package lifecycle_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func open(t *testing.T, mode string, mod func(*lifecycle.Config)) *lifecycle.Adapter {
	t.Helper()
	cfg := lifecycle.Config{Path: self(t), Env: env(mode)}
	if mod != nil {
		mod(&cfg)
	}
	a, err := lifecycle.Open(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return a
}

// R47, R48, R63, R64: a normal open, call and verified close leave nothing running and
// release the package directory.
func TestOpenCallCloseVerified(t *testing.T) {
	res := new(lifecycle.Reservations)
	a := open(t, "normal", func(c *lifecycle.Config) { c.Reservations = res })
	if a.Catalog() == nil || len(a.Catalog().Services) != 1 {
		t.Fatalf("catalog = %+v", a.Catalog())
	}
	pid := mustInt(t, must(a.Call(ctxT(t), "test.proc.pid", nil)))
	if pid != a.Pid() {
		t.Fatalf("adapter says pid %d, tree says %d", pid, a.Pid())
	}
	if err := res.CanRelease(a.PackageDir()); !errors.Is(err, lifecycle.ErrReserved) {
		t.Fatalf("CanRelease while open = %v, want ErrReserved", err)
	}
	t.Logf("mechanism: %v", a.Supervision().Mechanism)
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	goneNow(t, pid)
	if err := res.CanRelease(a.PackageDir()); err != nil {
		t.Fatalf("CanRelease after verified close = %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := a.Call(ctxT(t), "test.proc.ok", nil); runtime.CodeOf(err) != wire.CodeClosed || !runtime.IsNeverStarted(err) {
		t.Fatalf("call after close = %v, want closed, never started", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// R52, R51: the adapter exiting mid-call ends the connection with "process exited"
// (exit status kept), fails the pending call closed and uncertain, and tells the host.
func TestProcessExitMidCall(t *testing.T) {
	exited := make(chan lifecycle.ExitEvent, 1)
	a := open(t, "normal", func(c *lifecycle.Config) { c.OnExit = func(ev lifecycle.ExitEvent) { exited <- ev } })
	defer a.Close()
	_, err := a.Call(ctxT(t), "test.proc.exit", []byte(`{"code":3}`))
	if runtime.CodeOf(err) != wire.CodeClosed || !runtime.IsUncertain(err) || !errors.Is(err, wire.ProcessExited) {
		t.Fatalf("err = %v, want closed, uncertain, process exited", err)
	}
	var ee *lifecycle.ExitError
	if !errors.As(err, &ee) || ee.State == nil || ee.State.ExitCode() != 3 {
		t.Fatalf("exit status not kept: %v", err)
	}
	select {
	case ev := <-exited:
		if ev.Adapter != a || !errors.Is(ev.Cause, wire.ProcessExited) || ev.Cleanup != nil {
			t.Fatalf("exit event = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnExit not called")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close after exit: %v", err)
	}
}

// An adapter that exits while a grandchild holds its stdout must not hang the host, and
// the grandchild is part of the tree that is killed (R64) — also when it called setsid
// and left the adapter's process group (A25).
func TestExitWhileGrandchildHoldsPipes(t *testing.T) {
	for _, setsid := range []bool{false, true} {
		t.Run(map[bool]string{false: "same-session", true: "setsid"}[setsid], func(t *testing.T) {
			exited := make(chan lifecycle.ExitEvent, 1)
			a := open(t, "normal", func(c *lifecycle.Config) { c.OnExit = func(ev lifecycle.ExitEvent) { exited <- ev } })
			params := `{"setsid":false}`
			if setsid {
				params = `{"setsid":true}`
			}
			_ = mustInt(t, must(a.Call(ctxT(t), "test.proc.spawn", []byte(params))))
			kids := childrenOf(t, a.Pid())
			if len(kids) != 1 || !alive(kids[0]) {
				t.Fatalf("grandchild not found: %v", kids)
			}
			gc := kids[0]
			_, err := a.Call(ctxT(t), "test.proc.exit", []byte(`{"code":0}`))
			if !errors.Is(err, wire.ProcessExited) {
				t.Fatalf("err = %v", err)
			}
			select {
			case ev := <-exited:
				if ev.Cleanup != nil {
					t.Fatalf("cleanup not verified: %v (mechanism %v)", ev.Cleanup, a.Supervision().Mechanism)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("host hung: OnExit not called")
			}
			goneNow(t, gc)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// R47, R48, A23: an adapter that ignores stdin EOF (and SIGTERM) is killed after the
// disconnect grace and verified gone.
func TestStubbornAdapterKilledAfterGrace(t *testing.T) {
	l := &limits.Limits{DisconnectGrace: 200 * time.Millisecond}
	a := open(t, "stubborn", func(c *lifecycle.Config) { c.Limits = l })
	pid := a.Pid()
	start := time.Now()
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if waited := time.Since(start); waited < bound.Grace(l) {
		t.Fatalf("killed after %v, before the grace of %v", waited, bound.Grace(l))
	}
	goneNow(t, pid)
}

// R26: an invalid catalog fails Open with the catalog's rule, and ends the tree: the
// adapter and its setsid grandchild (their pids recorded by the adapter) no longer run
// when Open returns with the cleanup verified, as the system's process table shows.
func TestInvalidCatalogEndsTree(t *testing.T) {
	res := new(lifecycle.Reservations)
	pidfile := filepath.Join(testkit.TempDir(t), "pids")
	_, err := lifecycle.Open(ctxT(t), lifecycle.Config{Path: self(t), Env: env("badcatalog", "ADAPTERKIT_TEST_PIDFILE="+pidfile), Reservations: res})
	var oe *lifecycle.OpenError
	if !errors.As(err, &oe) || oe.Stage != lifecycle.StageHandshake || !errors.Is(err, proto.ErrInvalidCatalog) || oe.Cleanup != nil {
		t.Fatalf("err = %v", err)
	}
	b, rerr := os.ReadFile(pidfile)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	if rerr != nil || len(pids) != 2 {
		t.Fatalf("pid record %q (%v): want the adapter and its grandchild", b, rerr)
	}
	goneNow(t, pids...)
	if dirs := res.Reserved(); len(dirs) != 0 {
		t.Fatalf("reserved after failed open: %v", dirs)
	}
}

// A restart policy starts a crashed adapter again; calls made while it restarts wait.
func TestSuperviseRestarts(t *testing.T) {
	var exits atomic.Int32
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"),
		OnExit: func(lifecycle.ExitEvent) { exits.Add(1) }},
		lifecycle.RestartPolicy{MaxRestarts: 2, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := 0; round < 2; round++ {
		pid := mustInt(t, must(s.Call(ctxT(t), "test.proc.pid", nil)))
		if _, err := s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`)); !errors.Is(err, wire.ProcessExited) {
			t.Fatalf("round %d: %v", round, err)
		}
		waitGone(t, pid)
		next := mustInt(t, must(s.Call(ctxT(t), "test.proc.pid", nil)))
		if next == pid {
			t.Fatalf("round %d: not restarted", round)
		}
	}
	if s.Stats().Restarts != 2 || exits.Load() != 2 {
		t.Fatalf("restarts = %d, exits = %d", s.Stats().Restarts, exits.Load())
	}
	// The policy is used up: the next crash is final.
	_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`))
	_, err = s.Call(ctxT(t), "test.proc.ok", nil)
	if !errors.Is(err, lifecycle.ErrGaveUp) || !runtime.IsNeverStarted(err) {
		t.Fatalf("after giving up: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "all 2 restarts are used up") {
		t.Errorf("the message does not say the restarts ran out: %s", msg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
