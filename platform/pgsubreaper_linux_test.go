package platform

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	osProbes["is-subreaper"] = func(string) error {
		var v int32
		if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
			return err
		}
		if v == 0 {
			return errors.New("not a child subreaper")
		}
		return nil
	}
	osProbes["unsubreaper"] = func(string) error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }
}

// A sandboxed adapter in process-group mode is a child subreaper: the double-forked
// setsid daemon of the "tree" helper, whose parent exits at once, is re-parented to the
// adapter instead of init, so Kill finds and kills it. Verify still says unverified: a
// process group gives no proof. As root and as nobody.
func TestProcessGroupSandboxKillsOrphans(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testProcessGroupSandboxKillsOrphans)
}

func testProcessGroupSandboxKillsOrphans(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	tree := startHelper(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{Write: []string{dir}}}, "tree", pidfile)
	if line := readLine(t, tree.Stdout()); line != "ready" {
		t.Fatalf("helper said %q", line)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	delete(pids, "middle") // it has exited already: that is what orphans the daemon
	t.Cleanup(killLater(pids))
	if st, err := readStat(pids["daemon"]); err != nil || st.ppid != tree.Pid() {
		t.Fatalf("daemon %d: %+v, %v; want the adapter %d as its parent (a child subreaper)", pids["daemon"], st, err, tree.Pid())
	}
	ctx := ctxBound(t)
	if err := tree.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if err := tree.Verify(ctx); !errors.Is(err, ErrUnverified) {
		t.Fatalf("Verify = %v, want unverified: a process group proves nothing", err)
	}
	waitGone(t, pids)
}

// The sandbox's filter keeps the adapter a child subreaper: clearing it is refused.
// Other prctl options pass. As root and as nobody.
func TestSandboxKeepsSubreaper(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testSandboxKeepsSubreaper)
}

func testSandboxKeepsSubreaper(t *testing.T) {
	got, _ := probeResults(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{}}, "is-subreaper", "unsubreaper")
	if got["is-subreaper"] != "ok" || got["unsubreaper"] != "err operation not permitted" {
		t.Fatalf("probes %v: want the adapter a child subreaper that cannot stop being one", got)
	}
}

// What an uncontained adapter in process-group mode escapes with, as SECURITY.md says:
// its double-forked setsid daemon, whose parent exited before Kill looked, outlives
// Kill, and Verify says why nothing is proven. With HostOptions.ChildSubreaper the
// daemon is the host's child instead of init's (visible, and the host may kill it),
// but Kill still cannot tell it from the host's own children and leaves it. As root
// and as nobody.
func TestProcessGroupUncontainedEscape(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testProcessGroupUncontainedEscape)
}

func testProcessGroupUncontainedEscape(t *testing.T) {
	for _, subreaper := range []bool{false, true} {
		t.Run(fmt.Sprintf("host-subreaper=%v", subreaper), func(t *testing.T) {
			if subreaper {
				setHostOptions(t, HostOptions{ChildSubreaper: true})
			}
			tree, pids := startNsTree(t, IsolationProcessGroup)
			daemon := pids["daemon"]
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Fatal(err)
			}
			var ue *UnverifiedError
			if err := tree.Verify(ctx); !errors.As(err, &ue) || ue.Reason != noProofPgroup {
				t.Fatalf("Verify = %v, want unverified: %s", err, noProofPgroup)
			}
			st, err := readStat(daemon)
			if err != nil || !st.alive() {
				t.Fatalf("daemon %d: %+v, %v: Kill found it, SECURITY.md says it escapes", daemon, st, err)
			}
			if host := selfPid(); (st.ppid == host) != subreaper {
				t.Fatalf("daemon %d has parent %d (host %d), want the host exactly when it is a child subreaper", daemon, st.ppid, host)
			}
			if subreaper { // the host's child now: kill and reap it
				_ = unix.Kill(daemon, unix.SIGKILL)
				var ws unix.WaitStatus
				_, _ = unix.Wait4(daemon, &ws, 0, nil)
			}
		})
	}
}
