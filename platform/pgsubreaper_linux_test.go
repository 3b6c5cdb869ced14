package platform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
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
}

// A sandboxed adapter in process-group mode runs below its reaper, a child subreaper:
// the double-forked setsid daemon of the "tree" helper, whose parent exits at once, is
// re-parented to the reaper instead of init, so Kill ends it, and Verify proves the
// tree gone (Landlock's signal scope and the seccomp filter keep the adapter off its
// reaper; without them Verify says why not). As root and as nobody.
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
	sup := tree.Supervision()
	if !sup.Mechanism.Has(MechReaper) || tree.Pid() != pids["adapter"] || tree.pid == tree.Pid() {
		t.Fatalf("%s: adapter %d, Pid %d, direct child %d: want the adapter below a reaper", sup, pids["adapter"], tree.Pid(), tree.pid)
	}
	if st, err := readStat(pids["daemon"]); err != nil || st.ppid != tree.pid {
		t.Fatalf("daemon %d: %+v, %v; want the reaper %d as its parent (a child subreaper)", pids["daemon"], st, err, tree.pid)
	}
	ctx := ctxBound(t)
	if err := tree.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	err = tree.Verify(ctx)
	if sup.NoProof == "" && err != nil {
		t.Fatalf("Verify = %v, want the tree proven gone (%s)", err, sup)
	}
	var ue *UnverifiedError
	if sup.NoProof != "" && (!errors.As(err, &ue) || ue.Reason != sup.NoProof) {
		t.Fatalf("Verify = %v, want unverified: %s", err, sup.NoProof)
	}
	waitGone(t, pids)
}

// The reaper is not sandboxed, the adapter below it is: the reaper's main thread has
// neither no_new_privs nor a seccomp filter, the adapter has both; nor is the adapter
// a child subreaper itself. As root and as nobody.
func TestSandboxReaperUnrestricted(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testSandboxReaperUnrestricted)
}

func testSandboxReaperUnrestricted(t *testing.T) {
	tree := startHelper(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{}}, "echo")
	if _, err := io.WriteString(tree.Stdin(), "up\n"); err != nil {
		t.Fatal(err)
	}
	if line := readLine(t, tree.Stdout()); line != "up" {
		t.Fatalf("helper said %q", line)
	}
	if !tree.Supervision().Mechanism.Has(MechReaper) {
		t.Fatalf("%s: no reaper", tree.Supervision())
	}
	for _, c := range []struct {
		pid       int
		nnp, secc string
	}{{tree.pid, "0", "0"}, {tree.Pid(), "1", "2"}} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
		if err != nil {
			t.Fatal(err)
		}
		st := string(b)
		if !strings.Contains(st, "\nNoNewPrivs:\t"+c.nnp+"\n") || !strings.Contains(st, "\nSeccomp:\t"+c.secc+"\n") {
			t.Errorf("process %d (reaper %d): want NoNewPrivs %s, Seccomp %s:\n%s", c.pid, tree.pid, c.nnp, c.secc, st)
		}
	}
	// The thread that restricted itself and started the adapter has ended.
	var restricted []string
	if !testkit.Within(bound, func() bool {
		restricted = nil
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", tree.pid))
		for _, f := range tasks {
			if b, err := os.ReadFile(f); err == nil && !strings.Contains(string(b), "\nSeccomp:\t0\n") {
				restricted = append(restricted, f)
			}
		}
		return len(tasks) > 0 && len(restricted) == 0
	}) {
		t.Errorf("restricted threads of the reaper remain: %v", restricted)
	}
	got, _ := probeResults(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{}}, "is-subreaper")
	if got["is-subreaper"] != "err not a child subreaper" {
		t.Fatalf("probes %v: want the adapter no child subreaper (its reaper is)", got)
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
