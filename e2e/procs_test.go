//go:build linux

package e2e

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
