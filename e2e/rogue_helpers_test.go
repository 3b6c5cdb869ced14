//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
)

// The rogue tests run on Linux, where /proc lets them check processes and descriptors
// without asking the code under test.

// rogueLimits are short bounds that keep the rogue suite fast. Each is a lowered
// protocol bound (limits.Limits can only make adapterkit stricter).
func rogueLimits() *limits.Limits {
	return &limits.Limits{
		CallDeadline:     5 * time.Second,
		PipeWriteTimeout: 300 * time.Millisecond,
		DisconnectGrace:  time.Second,
	}
}

// rogueEnv is the whole environment of a rogue adapter: its mode and extra entries.
func rogueEnv(mode string, extra ...string) []string {
	return append([]string{"ROGUE_MODE=" + mode}, extra...)
}

// stepCtx is a context bounding one step of a test generously, so that a hang fails the
// test instead of stalling the suite.
func stepCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rogueAdapter is an adapter rogueAdapter by a test with its exit events.
type rogueAdapter struct {
	*lifecycle.Adapter
	exits chan lifecycle.ExitEvent
}

// openRogue opens the rogue adapter in mode through lifecycle, with the short limits;
// mod may change the configuration. The adapter is closed when the test ends.
func openRogue(t *testing.T, mode string, mod func(*lifecycle.Config)) *rogueAdapter {
	t.Helper()
	o := &rogueAdapter{exits: make(chan lifecycle.ExitEvent, 1)}
	cfg := lifecycle.Config{
		Path: buildBinT(t, "rogue"), Env: rogueEnv(mode), Limits: rogueLimits(), Name: "rogue-" + mode,
		OnExit: func(ev lifecycle.ExitEvent) { o.exits <- ev },
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := lifecycle.Open(stepCtx(t), cfg)
	if err != nil {
		t.Fatalf("open rogue %s: %v", mode, err)
	}
	o.Adapter = a
	t.Cleanup(func() { _ = a.Close() })
	return o
}

// awaitExit waits for the adapter's OnExit event.
func (o *rogueAdapter) awaitExit(t *testing.T) lifecycle.ExitEvent {
	t.Helper()
	select {
	case ev := <-o.exits:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: OnExit not called (the host hangs)", o.Name())
		return lifecycle.ExitEvent{}
	}
}

// companion is a well-behaved adapter (examples/echo) open next to a rogue one; every
// rogue test checks that it keeps working (R59).
type companion struct {
	a     *lifecycle.Adapter
	calls atomic.Int64
}

func openCompanion(t *testing.T) *companion {
	t.Helper()
	a, err := lifecycle.Open(stepCtx(t), lifecycle.Config{Path: buildBinT(t, "examples/echo"), Name: "companion"})
	if err != nil {
		t.Fatalf("open companion: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("companion close not verified: %v", err)
		}
	})
	return &companion{a: a}
}

// check makes one call with a unique token and requires it back unchanged.
func (c *companion) check(t *testing.T) {
	t.Helper()
	token := fmt.Sprintf(`{"token":"companion-%d"}`, c.calls.Add(1))
	got, err := c.a.Call(stepCtx(t), "example.echo.echo", json.RawMessage(token))
	if err != nil || string(got) != token {
		t.Fatalf("companion disturbed: %s, %v (want %s)", got, err, token)
	}
	if c.a.Err() != nil {
		t.Fatalf("companion connection ended: %v", c.a.Err())
	}
}

// callOutcome is what one call returned.
type callOutcome struct {
	value json.RawMessage
	err   error
}

// goCall starts a call in its own goroutine; the channel receives its single callOutcome.
func goCall(ctx context.Context, a *lifecycle.Adapter, method, params string) <-chan callOutcome {
	ch := make(chan callOutcome, 1)
	go func() {
		v, err := a.Call(ctx, method, json.RawMessage(params))
		ch <- callOutcome{v, err}
	}()
	return ch
}

// await receives the callOutcome of a call started with goCall. A Go call returns once,
// so a second outcome cannot show up here; a second reply on the wire for one id is
// what the host must refuse, and the "dupreply" case of TestRogueViolations checks
// that (the call gets the first reply, the connection ends with ErrUnknownReply).
func await(t *testing.T, ch <-chan callOutcome) callOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("call never ended")
		return callOutcome{}
	}
}

// pending starts n rogue.test.hang calls and waits until the host has them all pending.
func pendingHangs(t *testing.T, a *lifecycle.Adapter, n int) []<-chan callOutcome {
	t.Helper()
	base := a.InFlight()
	chs := make([]<-chan callOutcome, n)
	for i := range chs {
		chs[i] = goCall(stepCtx(t), a, "rogue.test.hang", "{}")
	}
	pollFor(t, "pending calls", func() bool { return a.InFlight() == base+n })
	return chs
}

// requireClosedBy checks the error of a call that was pending when the connection
// ended: closed, callOutcome uncertain, with the connection's typed cause (R51).
func requireClosedBy(t *testing.T, err error, cause error) {
	t.Helper()
	var ce *runtime.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *runtime.CallError", err)
	}
	if ce.Code != "closed" || !ce.Uncertain || ce.NeverStarted || !errors.Is(err, cause) {
		t.Fatalf("err = %v, want closed, uncertain, caused by %v", err, cause)
	}
}

// pidRunning reports whether pid is a running (not zombie) process, from /proc.
func pidRunning(pid int) bool { return testkit.Running(pid) }

// procsRunning lists the live processes whose executable is path, from /proc.
func procsRunning(path string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && exe == path && pidRunning(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// requireGone checks from /proc that no process runs path any more and pids are gone.
// The adapter's cleanup was verified before this is called, so nothing is awaited.
func requireGone(t *testing.T, path string, pids ...int) {
	t.Helper()
	for _, p := range pids {
		if pidRunning(p) {
			t.Fatalf("pid %d still running after a verified cleanup", p)
		}
	}
	if left := procsRunning(path); len(left) > 0 {
		t.Fatalf("processes of %s still running: %v", path, left)
	}
}

// fdTable lists this process's descriptors with their targets, from /proc.
func fdTable(t testing.TB) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int]string, len(ents))
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			out[n] = target
		}
	}
	return out
}
