//go:build linux

package e2e

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	adrt "github.com/adapterkit/adapterkit/runtime"
)

// Every test here checks the end of an adapter's process tree from outside: the
// processes of e2e/cmd/misbehave write their own host pids and start times to a record,
// and the test reads /proc, never the code under test, to see that none of them runs.

// assertGone checks the record's processes after lifecycle decided the cleanup: all of
// them gone when it was verified; when it honestly was not, the adapter itself must be
// gone and survivors are only logged (and killed by the test's cleanup).
func assertGone(t *testing.T, o *opened, verified bool) {
	t.Helper()
	ps := procsOf(o.record(t))
	if verified {
		d := waitGone(t, ps)
		t.Logf("%d recorded processes gone from /proc %v after cleanup was reported", len(ps), d.Round(time.Millisecond))
		return
	}
	waitGone(t, []procEvent{byRole(t, ps, "adapter")})
	if left := stillRunning(ps); len(left) > 0 {
		t.Logf("without cgroup or PID namespace these survive (expected, and reported unverified): %v", left)
	}
}

// R63, R64, A25: descendants of every shape end with the adapter when the host closes
// it: a grandchild in the process group, a double-forked setsid grandchild re-parented
// away from the adapter, the last link of a fork-and-exit chain, and (R47, R48, A24) an
// adapter that ignores SIGTERM and stdin EOF, killed after the disconnect grace.
func TestCloseEndsWholeTree(t *testing.T) {
	tests := []struct {
		mode     string
		selfExit bool     // the adapter itself exits on stdin EOF (R49), leaving its descendants
		alive    []string // roles running before Close
		gone     []string // roles that already exited on their own
		check    func(t *testing.T, o *opened, rec []procEvent)
	}{
		{mode: "grandchild", selfExit: true, alive: []string{"adapter", "sleeper"}, check: func(t *testing.T, o *opened, rec []procEvent) {
			a, s := byRole(t, rec, "adapter"), byRole(t, rec, "sleeper")
			if st, _ := readProcStat(s.pid); st.ppid != a.pid {
				t.Fatalf("sleeper's parent is %d, want the adapter %d", st.ppid, a.pid)
			}
		}},
		{mode: "doublefork", selfExit: true, alive: []string{"adapter", "daemon"}, gone: []string{"middle"}, check: func(t *testing.T, o *opened, rec []procEvent) {
			a, d := byRole(t, rec, "adapter"), byRole(t, rec, "daemon")
			as, _ := readProcStat(a.pid)
			ds, _ := readProcStat(d.pid)
			// A25: it left the adapter's session and process group, and its parent died.
			if ds.sd == as.sd || ds.pgid == as.pgid || ds.sd != d.pid {
				t.Fatalf("daemon session %d group %d, adapter session %d group %d: setsid did not happen", ds.sd, ds.pgid, as.sd, as.pgid)
			}
			if ds.ppid == byRole(t, rec, "middle").pid {
				t.Fatal("daemon still has its parent: not re-parented")
			}
		}},
		{mode: "chain", selfExit: true, alive: []string{"adapter", "chain1"}, gone: []string{"chain5", "chain4", "chain3", "chain2"}},
		{mode: "ignoreterm", alive: []string{"adapter", "sleeper"}, check: func(t *testing.T, o *opened, rec []procEvent) {
			for _, role := range []string{"adapter", "sleeper"} {
				p := byRole(t, rec, role)
				if !sigIgnored(t, p.pid, unix.SIGTERM) || !sigIgnored(t, p.pid, unix.SIGHUP) {
					t.Fatalf("%s does not ignore SIGTERM and SIGHUP", role)
				}
				if err := unix.Kill(p.pid, unix.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			// A pending fatal signal would be delivered before the adapter ran again.
			if _, err := o.Call(ctxFor(t, 10*time.Second), "misbehave.proc.ping", nil); err != nil {
				t.Fatalf("adapter did not survive SIGTERM: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			o := openMisbehave(t, tt.mode, 0, nil)
			rec := o.record(t)
			if got := byRole(t, rec, "adapter").pid; got != o.Pid() {
				t.Fatalf("record says adapter %d, lifecycle says %d", got, o.Pid())
			}
			if want := len(tt.alive) + len(tt.gone); len(procsOf(rec)) != want {
				t.Fatalf("record has %d processes, want %d: %v", len(procsOf(rec)), want, rec)
			}
			for _, role := range tt.alive {
				if !byRole(t, rec, role).alive() {
					t.Fatalf("%s is not running before Close", role)
				}
			}
			for _, role := range tt.gone {
				// It exits right after starting the next process; wait for that.
				waitGone(t, []procEvent{byRole(t, rec, role)})
			}
			if tt.check != nil {
				tt.check(t, o, rec)
			}
			start := time.Now()
			err := o.Close()
			closed := time.Since(start)
			verified := o.checkCleanup(t, err)
			assertGone(t, o, verified)
			if got := countEvents(o.record(t), "exit") == 1; got != tt.selfExit {
				t.Fatalf("adapter exited on its own: %v, want %v", got, tt.selfExit)
			}
			if tt.mode == "ignoreterm" && closed < o.lim.Grace() {
				// R47: it never exits on its own, so the host must have waited the grace.
				t.Fatalf("Close returned after %v, before the disconnect grace %v", closed, o.lim.Grace())
			}
			t.Logf("mechanism %v; Close took %v", o.Mechanism(), closed.Round(time.Millisecond))
		})
	}
}

// R47, R48, R49, A23: after stdin EOF an adapter may take its time to exit. Within the
// disconnect grace it exits on its own (its own "exit" record proves it was not
// killed); beyond a grace it is killed, and either way the tree is verified gone.
func TestSlowExitAfterEOF(t *testing.T) {
	tests := []struct {
		name     string
		delayMS  int
		lim      *limits.Limits
		selfExit bool
	}{
		// The protocol's own grace (5 s) for the adapter that is merely slow.
		{name: "within default grace", delayMS: 1000, lim: nil, selfExit: true},
		{name: "beyond shortened grace", delayMS: 10000, lim: fastLimits(), selfExit: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := openMisbehave(t, "slowexit", tt.delayMS, func(c *lifecycle.Config) { c.Limits = tt.lim })
			start := time.Now()
			err := o.Close()
			closed := time.Since(start)
			verified := o.checkCleanup(t, err)
			assertGone(t, o, verified)
			if got := countEvents(o.record(t), "exit") == 1; got != tt.selfExit {
				t.Fatalf("adapter exited on its own: %v, want %v (Close took %v)", got, tt.selfExit, closed)
			}
			if !tt.selfExit && closed < tt.lim.Grace() {
				t.Fatalf("killed after %v, before the grace %v", closed, tt.lim.Grace())
			}
			t.Logf("delay %d ms, grace %v: Close took %v", tt.delayMS, tt.lim.Grace(), closed.Round(time.Millisecond))
		})
	}
}

// R52, A26: an adapter that closes its stdout while connected but keeps running is an
// output violation: the host ends the connection, kills the tree (it never exits on its
// own) and reports it through OnExit, with the cleanup verified.
func TestStdoutClosedProcessAlive(t *testing.T) {
	o := openMisbehave(t, "stdoutclosed", 0, nil)
	adapter := byRole(t, o.record(t), "adapter")
	ev := o.exitEvent(t)
	if !errors.Is(ev.Cause, adrt.ErrOutputViolation) {
		t.Fatalf("cause = %v, want %v", ev.Cause, adrt.ErrOutputViolation)
	}
	if !errors.Is(o.Err(), adrt.ErrOutputViolation) {
		t.Fatalf("connection error = %v", o.Err())
	}
	verified := o.checkCleanup(t, ev.Cleanup)
	assertGone(t, o, verified)
	if countEvents(o.record(t), "exit") != 0 {
		t.Fatal("the adapter exited on its own: the host was meant to kill it")
	}
	if _, err := o.Call(ctxFor(t, 5*time.Second), "misbehave.proc.ping", nil); !errors.Is(err, adrt.ErrClosed) {
		t.Fatalf("call after the violation = %v, want closed", err)
	}
	if err := o.Close(); err != ev.Cleanup {
		t.Fatalf("Close = %v, want the cleanup result %v", err, ev.Cleanup)
	}
	t.Logf("adapter %d killed after closing its stdout; mechanism %v", adapter.pid, o.Mechanism())
}

// R52, R64, A26: the adapter exits while its child still holds its stdin and stdout.
// The host must not wait for an EOF that never comes: the exit ends the connection
// (process exited, status kept), and the pipe holder is killed with the tree.
func TestExitWhileGrandchildHoldsPipes(t *testing.T) {
	o := openMisbehave(t, "exitholding", 0, nil)
	rec := o.record(t)
	adapter, holder := byRole(t, rec, "adapter"), byRole(t, rec, "holder")
	for fd := 0; fd <= 1; fd++ {
		if a, h := fdTarget(t, adapter.pid, fd), fdTarget(t, holder.pid, fd); a != h || !strings.HasPrefix(a, "pipe:") {
			t.Fatalf("fd %d: adapter has %s, holder has %s: the holder does not hold the pipe", fd, a, h)
		}
	}
	_, err := o.Call(ctxFor(t, 10*time.Second), "misbehave.proc.exit", []byte(`{"code":7}`))
	if !errors.Is(err, adrt.ErrProcessExited) || !errors.Is(err, adrt.ErrClosed) || !adrt.IsUncertain(err) {
		t.Fatalf("call = %v, want closed, uncertain, process exited", err)
	}
	var ee *lifecycle.ExitError
	if !errors.As(err, &ee) || ee.State == nil || ee.State.ExitCode() != 7 {
		t.Fatalf("exit status not kept: %v", err)
	}
	ev := o.exitEvent(t)
	if !errors.Is(ev.Cause, adrt.ErrProcessExited) {
		t.Fatalf("cause = %v", ev.Cause)
	}
	verified := o.checkCleanup(t, ev.Cleanup)
	assertGone(t, o, verified)
}

// R59, R51: violations are per process. Of three adapters open at once, one breaks
// the protocol or dies; its calls fail and its tree is cleaned up, while calls already in
// flight on the other two complete and later calls are answered as before.
func TestOneFailingAdapterDoesNotDisturbOthers(t *testing.T) {
	tests := []struct {
		name  string
		fail  func(t *testing.T, victim *opened) error // returns the failed call's error, if any
		cause error
	}{
		{name: "garbage on stdout", cause: adrt.ErrOutputViolation, fail: func(t *testing.T, v *opened) error {
			_, err := v.Call(ctxFor(t, 10*time.Second), "misbehave.proc.garbage", nil)
			return err
		}},
		{name: "exit mid-call", cause: adrt.ErrProcessExited, fail: func(t *testing.T, v *opened) error {
			_, err := v.Call(ctxFor(t, 10*time.Second), "misbehave.proc.exit", []byte(`{"code":1}`))
			return err
		}},
		{name: "SIGKILLed from outside", cause: adrt.ErrProcessExited, fail: func(t *testing.T, v *opened) error {
			if err := unix.Kill(v.Pid(), unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthy := []*opened{openMisbehave(t, "grandchild", 0, nil), openMisbehave(t, "normal", 0, nil)}
			victim := openMisbehave(t, "grandchild", 0, nil)

			// Calls started on the healthy adapters before the victim fails, lasting past it.
			var wg sync.WaitGroup
			inflight := make([]error, len(healthy))
			for i, h := range healthy {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, inflight[i] = h.Call(ctxFor(t, 10*time.Second), "misbehave.proc.sleep", []byte(`{"ms":300}`))
				}()
			}
			err := tt.fail(t, victim)
			if err != nil && (!errors.Is(err, adrt.ErrClosed) || !errors.Is(err, tt.cause)) {
				t.Fatalf("victim's call = %v, want closed by %v", err, tt.cause)
			}
			ev := victim.exitEvent(t)
			if !errors.Is(ev.Cause, tt.cause) {
				t.Fatalf("victim ended by %v, want %v", ev.Cause, tt.cause)
			}
			verified := victim.checkCleanup(t, ev.Cleanup)
			assertGone(t, victim, verified)

			wg.Wait()
			for i, h := range healthy {
				if inflight[i] != nil {
					t.Fatalf("healthy adapter %d: call in flight failed: %v", i, inflight[i])
				}
				for range 3 {
					if _, err := h.Call(ctxFor(t, 10*time.Second), "misbehave.proc.ping", nil); err != nil {
						t.Fatalf("healthy adapter %d after the victim failed: %v", i, err)
					}
				}
				if h.Err() != nil {
					t.Fatalf("healthy adapter %d connection ended: %v", i, h.Err())
				}
				if left := stillRunning(procsOf(h.record(t))); len(left) != len(procsOf(h.record(t))) {
					t.Fatalf("healthy adapter %d lost processes: only %v of %v run", i, left, procsOf(h.record(t)))
				}
				select {
				case ev := <-h.exits:
					t.Fatalf("healthy adapter %d reported an exit: %+v", i, ev)
				default:
				}
			}
			for _, h := range healthy {
				verified := h.checkCleanup(t, h.Close())
				assertGone(t, h, verified)
			}
		})
	}
}
