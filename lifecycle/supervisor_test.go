//go:build linux

package lifecycle_test

import (
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
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
func TestSuperviseConcurrentClose(t *testing.T) {
	l := &limits.Limits{DisconnectGrace: time.Second}
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("stubborn"), Limits: l},
		lifecycle.RestartPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Current()
	first := make(chan error, 1)
	go func() { first <- s.Close() }()
	// Close drops the current adapter before it closes it (through the grace).
	deadline := time.Now().Add(10 * time.Second)
	for s.Current() != nil {
		if time.Now().After(deadline) {
			t.Fatal("first Close did not start")
		}
		time.Sleep(time.Millisecond)
	}
	err2 := s.Close()
	select {
	case <-a.Done():
	default:
		t.Fatal("second Close returned while the adapter was still being closed")
	}
	err1 := <-first
	if err1 != err2 { // the same result: the very same error value, not an equal-looking one
		t.Fatalf("Close results differ: first %v, second %v", err1, err2)
	}
	if err1 != nil {
		t.Fatalf("Close: %v", err1)
	}
	goneNow(t, a.Pid())
}
