//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Every test here checks the end of an adapter's process tree from outside: the
// processes of e2e/cmd/misbehave write their own host pids and start times to a record,
// and the test reads /proc, never the code under test, to see that none of them runs.

// assertGone checks the record's processes after lifecycle decided the cleanup; see
// assertRecordGone.
func assertGone(t *testing.T, o *opened, verified bool) {
	t.Helper()
	assertRecordGone(t, procsOf(o.record(t)), verified)
}

// assertRecordGone checks from /proc that all of ps are gone when the cleanup was
// verified. When lifecycle honestly reported it unverified (no cgroup, no PID
// namespace), the adapters themselves must be gone; descendants that escaped are only
// logged (the test's cleanup kills them), as that is exactly what could not be proven.
func assertRecordGone(t *testing.T, ps []procEvent, verified bool) {
	t.Helper()
	if verified {
		// Verified means gone at the moment the cleanup returned: no grace period.
		if left := stillRunning(ps); len(left) > 0 {
			killRecorded(left)
			t.Fatalf("still running when the cleanup reported the tree verified gone: %v", left)
		}
		return
	}
	var adapters []procEvent
	for _, p := range ps {
		if p.role == "adapter" {
			adapters = append(adapters, p)
		}
	}
	waitGone(t, adapters)
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
			// The middle's main thread shows as a zombie as soon as it exits, but its
			// children are re-parented only when its last thread has exited (the
			// kernel's exit, not the code under test, and slow under -race on a busy
			// machine): wait for that, bounded.
			middle := byRole(t, rec, "middle").pid
			pollFor(t, "the daemon re-parented away from the exited middle", func() bool {
				ds, ok := readProcStat(d.pid)
				return ok && ds.ppid != middle
			})
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
			// The adapter's own report agrees with the record its processes wrote.
			var reported []struct {
				Role  string `json:"role"`
				Pid   int    `json:"pid"`
				Start uint64 `json:"start"`
			}
			raw, err := o.Call(ctxFor(t, 10*time.Second), "misbehave.proc.pids", nil)
			if err != nil || json.Unmarshal(raw, &reported) != nil || len(reported) != len(procsOf(rec)) {
				t.Fatalf("misbehave.proc.pids = %s, %v; record %v", raw, err, rec)
			}
			for i, r := range reported {
				if p := procsOf(rec)[i]; r.Role != p.role || r.Pid != p.pid || r.Start != p.start {
					t.Fatalf("adapter reports %+v, record has %v", r, p)
				}
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
			err = o.Close()
			closed := time.Since(start)
			verified := o.checkCleanup(t, err)
			assertGone(t, o, verified)
			if got := countEvents(o.record(t), "exit") == 1; got != tt.selfExit {
				t.Fatalf("adapter exited on its own: %v, want %v", got, tt.selfExit)
			}
			if tt.mode == "ignoreterm" && closed < bound.Grace(o.lim) {
				// R47: it never exits on its own, so the host must have waited the grace.
				t.Fatalf("Close returned after %v, before the disconnect grace %v", closed, bound.Grace(o.lim))
			}
			t.Logf("mechanism %v; Close took %v", o.Supervision().Mechanism, closed.Round(time.Millisecond))
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
			if !tt.selfExit && closed < bound.Grace(tt.lim) {
				t.Fatalf("killed after %v, before the grace %v", closed, bound.Grace(tt.lim))
			}
			t.Logf("delay %d ms, grace %v: Close took %v", tt.delayMS, bound.Grace(tt.lim), closed.Round(time.Millisecond))
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
	if !errors.Is(ev.Cause, wire.Output) {
		t.Fatalf("cause = %v, want %v", ev.Cause, wire.Output)
	}
	if !errors.Is(o.Err(), wire.Output) {
		t.Fatalf("connection error = %v", o.Err())
	}
	verified := o.checkCleanup(t, ev.Cleanup)
	assertGone(t, o, verified)
	if countEvents(o.record(t), "exit") != 0 {
		t.Fatal("the adapter exited on its own: the host was meant to kill it")
	}
	if _, err := o.Call(ctxFor(t, 5*time.Second), "misbehave.proc.ping", nil); runtime.CodeOf(err) != wire.CodeClosed {
		t.Fatalf("call after the violation = %v, want closed", err)
	}
	if err := o.Close(); err != ev.Cleanup {
		t.Fatalf("Close = %v, want the cleanup result %v", err, ev.Cleanup)
	}
	t.Logf("adapter %d killed after closing its stdout; mechanism %v", adapter.pid, o.Supervision().Mechanism)
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
	if !errors.Is(err, wire.ProcessExited) || runtime.CodeOf(err) != wire.CodeClosed || !runtime.IsUncertain(err) {
		t.Fatalf("call = %v, want closed, uncertain, process exited", err)
	}
	var ee *lifecycle.ExitError
	if !errors.As(err, &ee) || ee.State == nil || ee.State.ExitCode() != 7 {
		t.Fatalf("exit status not kept: %v", err)
	}
	ev := o.exitEvent(t)
	if !errors.Is(ev.Cause, wire.ProcessExited) {
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
		{name: "garbage on stdout", cause: wire.Output, fail: func(t *testing.T, v *opened) error {
			_, err := v.Call(ctxFor(t, 10*time.Second), "misbehave.proc.garbage", nil)
			return err
		}},
		{name: "exit mid-call", cause: wire.ProcessExited, fail: func(t *testing.T, v *opened) error {
			_, err := v.Call(ctxFor(t, 10*time.Second), "misbehave.proc.exit", []byte(`{"code":1}`))
			return err
		}},
		{name: "SIGKILLed from outside", cause: wire.ProcessExited, fail: func(t *testing.T, v *opened) error {
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

			// Calls running on the healthy adapters before the victim fails (each has
			// recorded "call"), lasting past it: they end only when the release file
			// exists, which the test creates after the victim's cleanup.
			release := filepath.Join(t.TempDir(), "release")
			params, _ := json.Marshal(map[string]string{"file": release})
			var wg sync.WaitGroup
			inflight := make([]error, len(healthy))
			returned := make([]atomic.Bool, len(healthy))
			for i, h := range healthy {
				before := countEvents(h.record(t), "call")
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, inflight[i] = h.Call(ctxFor(t, 60*time.Second), "misbehave.proc.await", params)
					returned[i].Store(true)
				}()
				pollFor(t, "the healthy call running in the adapter", func() bool {
					return countEvents(h.record(t), "call") > before
				})
			}
			err := tt.fail(t, victim)
			if err != nil && (runtime.CodeOf(err) != wire.CodeClosed || !errors.Is(err, tt.cause)) {
				t.Fatalf("victim's call = %v, want closed by %v", err, tt.cause)
			}
			ev := victim.exitEvent(t)
			if !errors.Is(ev.Cause, tt.cause) {
				t.Fatalf("victim ended by %v, want %v", ev.Cause, tt.cause)
			}
			verified := victim.checkCleanup(t, ev.Cleanup)
			assertGone(t, victim, verified)

			for i := range healthy {
				if returned[i].Load() {
					t.Fatalf("healthy adapter %d: the call in flight ended before it was released: %v", i, inflight[i])
				}
			}
			if err := os.WriteFile(release, nil, 0o600); err != nil {
				t.Fatal(err)
			}
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

// R64, R63 and the design's promise that a host killed with SIGKILL leaves nothing
// running: a host program (e2e/cmd/testhost, a child of the test) opens three misbehave
// adapters with a grandchild, a double-forked setsid daemon and a fork-and-exit chain,
// idle or in the middle of calls, and is SIGKILLed. Its code gets no chance to clean up:
// what ends the trees is the operating system's supervision (parent-death signal to each
// adapter, whose PID namespace then dies with it). Where there is no PID namespace but a
// cgroup, the descendants wait in the cgroup for Sweep, which the test runs.
func TestHostSIGKILLed(t *testing.T) {
	const n = 3
	for _, midCall := range []bool{false, true} {
		t.Run(map[bool]string{false: "idle", true: "mid-call"}[midCall], func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			cleanupRecord(t, pidfile)
			args := []string{"-adapter", buildBinT(t, "misbehave"), "-pids", pidfile,
				"-n", strconv.Itoa(n), "-modes", "grandchild,doublefork,chain"}
			if midCall {
				args = append(args, "-call")
			}
			host := exec.Command(buildBinT(t, "testhost"), args...)
			host.Env = []string{}
			var stderr strings.Builder
			host.Stderr = &stderr
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cg := testkit.PrivateCgroup(t) // only this test's hosts sweep it
			started := testkit.InCgroup(t, host, cg)
			err = host.Start()
			started()
			if err != nil {
				t.Fatal(err)
			}
			waited := false
			t.Cleanup(func() {
				if !waited {
					_ = host.Process.Kill()
					_ = host.Wait()
				}
			})
			lines := bufio.NewScanner(out)
			readLine := func(prefix string) string {
				if !lines.Scan() || !strings.HasPrefix(lines.Text(), prefix) {
					t.Fatalf("host said %q (%v), want %q; stderr: %s", lines.Text(), lines.Err(), prefix, stderr.String())
				}
				return lines.Text()
			}
			mech := strings.Split(strings.TrimPrefix(readLine("ready "), "ready "), "|")
			checkWantedMechanism(t, strings.Join(mech, "|"))
			if midCall {
				readLine("calling")
				pollFor(t, "every adapter running its call", func() bool {
					return countEvents(readRecord(t, pidfile), "call") == n
				})
			}
			ps := procsOf(readRecord(t, pidfile))
			// adapter+sleeper, adapter+middle+daemon, adapter+chain5..chain1.
			if len(ps) != 2+3+6 {
				t.Fatalf("record has %d processes, want 11: %v", len(ps), ps)
			}
			var adapters []procEvent
			for _, p := range ps {
				if p.role == "adapter" {
					adapters = append(adapters, p)
				}
			}
			waitGone(t, []procEvent{byRole(t, ps, "middle"), byRole(t, ps, "chain5"), byRole(t, ps, "chain2")})
			running := stillRunning(ps)
			if len(running) != n+3 {
				t.Fatalf("before the kill %v run, want the %d adapters, sleeper, daemon and chain1", running, n)
			}

			killed := time.Now()
			if err := host.Process.Signal(unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()
			waited = true
			switch {
			case slices.Contains(mech, "pidns"):
				waitGone(t, running)
				t.Logf("mechanism %s: all %d running pids (%d adapters) gone from /proc %v after the host's SIGKILL",
					strings.Join(mech, "|"), len(running), n, time.Since(killed).Round(time.Millisecond))
			case slices.Contains(mech, "pdeathsig"):
				waitGone(t, adapters)
				t.Logf("mechanism %s: the %d adapters gone %v after the host's SIGKILL (parent-death signal)",
					strings.Join(mech, "|"), n, time.Since(killed).Round(time.Millisecond))
			default:
				t.Fatalf("mechanism %s has no parent-death signal: a SIGKILLed host would leave its adapters", mech)
			}
			sweepAfterHost(t, cg, host.Process.Pid, mech, running, n)
		})
	}
}

// sweepAfterHost runs platform.Sweep after a host died, from a second host (testhost
// -sweep) started in the cgroup where the dead one ran. With a cgroup it must find the
// dead host's n per-adapter cgroups, kill what they still hold and remove them; without
// a PID namespace that is what ends the descendants. As root, the host ran in a private
// cgroup (cg) that no other host of the machine sweeps, so the count is this sweep's;
// and there the adapters must have had a cgroup. Without root and without either
// mechanism, descendants cannot be reached, and the test says so.
func sweepAfterHost(t *testing.T, cg string, hostPid int, mech []string, running []procEvent, n int) {
	t.Helper()
	if !slices.Contains(mech, "cgroup") {
		if cg != "" {
			t.Fatalf("as root in a writable cgroup the adapters ran with %s: want a cgroup", strings.Join(mech, "|"))
		}
		if !slices.Contains(mech, "pidns") {
			if left := stillRunning(running); len(left) > 0 {
				t.Skipf("needs root (PID namespace) or a writable cgroup v2: with %s a SIGKILLed host's descendants %v survive; the test kills them", strings.Join(mech, "|"), left)
			}
		}
		return
	}
	sweeper := exec.Command(buildBinT(t, "testhost"), "-sweep")
	sweeper.Env = []string{}
	started := testkit.InCgroup(t, sweeper, cg)
	out, err := sweeper.Output()
	started()
	if err != nil {
		t.Fatalf("testhost -sweep: %v: %s", err, out)
	}
	var rep struct {
		Swept, Failed []struct {
			Path    string `json:"path"`
			HostPid int    `json:"host_pid"`
			Err     string `json:"err"`
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("testhost -sweep said %q: %v", out, err)
	}
	var mine int
	for _, it := range rep.Swept {
		if it.HostPid == hostPid {
			mine++
		}
	}
	for _, it := range rep.Failed {
		if it.HostPid == hostPid {
			t.Errorf("Sweep could not clean %s: %s", it.Path, it.Err)
		}
	}
	if cg != "" && mine != n {
		t.Fatalf("Sweep removed %d cgroups of the dead host, want %d: %s", mine, n, out)
	}
	// The sweep proved each cgroup empty before removing it: nothing runs now.
	if left := stillRunning(running); len(left) > 0 {
		killRecorded(left)
		t.Fatalf("still running after the sweep removed the dead host's cgroups: %v", left)
	}
	t.Logf("Sweep removed %d cgroups of the dead host %d; nothing of it runs", mine, hostPid)
}

// R63, R64: 200 open/close cycles, rotating through adapters with and without
// descendants, leave no process, no file descriptor and no goroutine behind, and no
// package directory reserved.
func TestOpenCloseCycles(t *testing.T) {
	const cycles = 200
	modes := []string{"normal", "grandchild", "doublefork", "normal"}
	exe := buildBinT(t, "misbehave")
	pidfile := filepath.Join(t.TempDir(), "pids")
	cleanupRecord(t, pidfile)
	res := new(lifecycle.Reservations)
	var mech platform.Mechanism
	cycle := func(mode string) {
		t.Helper()
		conf := []byte(`{"mode":"` + mode + `","pidfile":"` + pidfile + `"}`)
		a, err := lifecycle.Open(ctxFor(t, 20*time.Second), lifecycle.Config{
			Path: exe, Configuration: conf, Limits: fastLimits(), Reservations: res,
		})
		if err != nil {
			t.Fatalf("Open %s: %v", mode, err)
		}
		if _, err := a.Call(ctxFor(t, 10*time.Second), "misbehave.proc.ping", nil); err != nil {
			t.Fatalf("ping: %v", err)
		}
		mech = a.Supervision().Mechanism
		checkWantedMechanism(t, mech.String())
		if err := a.Close(); err != nil && provable(mech) {
			t.Fatalf("Close under %v: %v", mech, err)
		}
	}
	// One cycle first, so that what the process sets up once (the spawner's first
	// use, lazily opened files) is not counted as a leak.
	cycle("normal")
	fds, goroutines := settle(t, -1, -1)

	start := time.Now()
	for i := range cycles {
		cycle(modes[i%len(modes)])
	}
	elapsed := time.Since(start)

	ps := procsOf(readRecord(t, pidfile))
	if want := 1 + cycles/4*(1+2+3+1); len(ps) != want {
		t.Fatalf("record has %d processes, want %d", len(ps), want)
	}
	assertRecordGone(t, ps, provable(mech))
	if kids := childrenRunning(os.Getpid(), exe); len(kids) > 0 {
		t.Fatalf("children of the test still running: %v", kids)
	}
	// R63: released when every cleanup was verified, kept when it could not be.
	if dirs := res.Reserved(); provable(mech) != (len(dirs) == 0) {
		t.Fatalf("mechanism %v: reserved after all closed: %v", mech, dirs)
	}
	fdsAfter, goroutinesAfter := settle(t, fds, goroutines)
	t.Logf("mechanism %v: %d cycles (%d processes) in %v: fds %d -> %d, goroutines %d -> %d, reserved %v",
		mech, cycles, len(ps), elapsed.Round(time.Millisecond), fds, fdsAfter, goroutines, goroutinesAfter, res.Reserved())
}

// settle waits (bounded) until this process has at most fds descriptors open and at
// most goroutines goroutines (a negative value: no target), then returns both counts.
// Descriptors and goroutines of ended adapters go away shortly after Close returns
// (reaping, pipe copies), so a count still above the target after the bound is a leak.
func settle(t *testing.T, fds, goroutines int) (int, int) {
	t.Helper()
	var f, g int
	if !testkit.Within(goneBound, func() bool {
		f, g = openFDs(t), goruntime.NumGoroutine()
		return (fds < 0 || f <= fds) && (goroutines < 0 || g <= goroutines)
	}) {
		t.Fatalf("leak: %d descriptors open (before: %d), %d goroutines (before: %d)", f, fds, g, goroutines)
	}
	return f, g
}
