package lifecycle_test

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
)

// R63: Supervisor.Close called from within Config.OnExit (a host that gives up on a
// crashed adapter) returns, closing the supervisor, instead of waiting for the restart
// loop that is itself waiting for OnExit to return.
func TestSuperviseCloseFromOnExit(t *testing.T) {
	var s *lifecycle.Supervisor
	ready := make(chan struct{})
	closed := make(chan error, 1)
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"),
		OnExit: func(lifecycle.ExitEvent) {
			<-ready
			closed <- s.Close()
		}},
		lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	pid := s.Current().Pid()
	_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`))
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close from OnExit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close called from OnExit did not return (deadlock with the restart loop)")
	}
	goneNow(t, pid)
	if a := s.Current(); a != nil {
		t.Fatalf("an adapter (pid %d) is running after Close", a.Pid())
	}
}

// R47, R63: a second Close made while the first is still closing the adapter waits
// for it and returns the same result: it never reports a close that has not happened.
// "The same" is checked where it can differ: verified (nil) with the default isolation,
// and an unverified error with the process-group fallback, which cannot prove an end.
func TestSuperviseConcurrentClose(t *testing.T) {
	type isolation struct {
		name       string
		iso        platform.Isolation
		unverified bool
	}
	cases := []isolation{{"auto", platform.IsolationAuto, false}}
	if goruntime.GOOS != "windows" { // Windows has the job object alone
		cases = append(cases, isolation{"pgroup", platform.IsolationProcessGroup, true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &limits.Limits{DisconnectGrace: time.Second}
			s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("stubborn"), Limits: l, Isolation: tc.iso},
				lifecycle.RestartPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			a := s.Current()
			first := make(chan error, 1)
			go func() { first <- s.Close() }()
			// Close drops the current adapter before it closes it (through the grace).
			testkit.Eventually(t, 10*time.Second, func() bool { return s.Current() == nil }, "first Close did not start")
			err2 := s.Close()
			select {
			case <-a.Done():
			default:
				t.Fatal("second Close returned while the adapter was still being closed")
			}
			err1 := <-first
			if err1 != err2 { // the very same error value, not an equal-looking one
				t.Fatalf("Close results differ: first %v, second %v", err1, err2)
			}
			var ue *platform.UnverifiedError
			if tc.unverified {
				if !errors.As(err1, &ue) {
					t.Fatalf("Close = %v, want an unverified cleanup", err1)
				}
				waitGone(t, a.Pid()) // the adapter itself was killed; only the proof is missing
				return
			}
			if err1 != nil {
				t.Fatalf("Close: %v", err1)
			}
			goneNow(t, a.Pid())
		})
	}
}

// A host that closes the supervised adapter itself (Current().Close) ends the
// supervisor as its Close would: the adapter is not restarted, OnExit is not called
// (the host closed it), and later calls fail at once, never started, matching
// runtime.ErrClosed (the one "closed by the host" sentinel) and ErrGaveUp.
func TestSuperviseCurrentClosedByHost(t *testing.T) {
	exits := make(chan lifecycle.ExitEvent, 4)
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"),
		OnExit: func(ev lifecycle.ExitEvent) { exits <- ev }},
		lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := s.Current()
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`))
	if !errors.Is(err, runtime.ErrClosed) || !errors.Is(err, lifecycle.ErrGaveUp) || !runtime.IsNeverStarted(err) {
		t.Fatalf("call after the host closed the adapter = %v, want never started, ErrClosed and ErrGaveUp", err)
	}
	if cur := s.Current(); cur != nil {
		t.Fatalf("an adapter (pid %d) runs after the host closed the supervised one", cur.Pid())
	}
	if s.Stats().Restarts != 0 {
		t.Fatalf("%d restarts after a close by the host", s.Stats().Restarts)
	}
	select {
	case ev := <-exits:
		t.Fatalf("OnExit called for a close by the host: %v", ev.Cause)
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Supervisor.Close after the adapter's: %v", err)
	}
}

// goroutinesIn counts the goroutines whose stack (with its "created by" line) has
// text, once each.
func goroutinesIn(text string) int {
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(text)) {
			n++
		}
	}
	return n
}

// A supervised adapter that runs costs no restart goroutine: the restart loop starts
// when the adapter first ends, and then restarts it as before.
func TestSuperviseLoopStartsAtFirstEnd(t *testing.T) {
	// Whether it runs yet or not (a goroutine not yet run shows no frame of its own).
	const loop = "created by github.com/adapterkit/adapterkit/lifecycle.Supervise"
	before := goroutinesIn(loop)
	exits := make(chan lifecycle.ExitEvent, 4)
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("normal"),
		OnExit: func(ev lifecycle.ExitEvent) { exits <- ev }},
		lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := goroutinesIn(loop) - before; n != 0 {
		t.Fatalf("%d restart loops run while the adapter runs", n)
	}
	first := s.Current().Pid()
	_, _ = s.Call(ctxT(t), "test.proc.exit", []byte(`{"code":1}`))
	<-exits
	// The call waits for the restart.
	if _, err := s.Call(ctxT(t), "test.proc.ok", []byte(`{}`)); err != nil {
		t.Fatalf("call after the adapter ended: %v", err)
	}
	if cur := s.Current(); cur == nil || cur.Pid() == first || s.Stats().Restarts != 1 {
		t.Fatalf("not restarted once: %+v, %d restarts", cur, s.Stats().Restarts)
	}
	if n := goroutinesIn(loop) - before; n != 1 {
		t.Fatalf("%d restart loops run after the first end, want 1", n)
	}
}
