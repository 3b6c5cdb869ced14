package platform

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ownPidnsEnv names the test that runs inside a PID namespace of its own.
const ownPidnsEnv = "ADAPTERKIT_PLATFORM_OWN_PIDNS"

// inOwnPidNamespace runs the calling test again in a PID and mount namespace of its
// own, with a /proc of that namespace, and reports whether the caller is that inner
// run (which goes on with the test body). The outer run relays the inner one's verdict.
// The test writes ns_last_pid, which is per PID namespace: done in the machine's, it
// would steer the pids of every other process on the machine; in its own, it touches
// nothing else, and no other process competes for the pid.
func inOwnPidNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownPidnsEnv) == t.Name() {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			t.Fatalf("making mounts private: %v", err)
		}
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			t.Fatalf("mounting /proc of the new PID namespace: %v", err)
		}
		prewarmThreads()
		return true
	}
	cmd := exec.Command(mustExecutable(), "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ownPidnsEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in its own PID namespace: %v\n%s", err, out)
	}
	t.Logf("passed in its own PID namespace")
	return false
}

// startWithPid starts the "echo" helper as the leader of its own process group with
// the given pid, recycling it through ns_last_pid. Call it only inside the test's own
// PID namespace (inOwnPidNamespace), where nothing else takes pids.
func startWithPid(t *testing.T, pid int) (stdin io.WriteCloser, stdout io.Reader) {
	t.Helper()
	for range 20 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("cannot choose the next pid: %v", err)
		}
		c := helperCmd("echo")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.Process.Pid == pid {
			t.Cleanup(func() {
				_ = c.Process.Kill()
				_ = c.Wait()
			})
			return in, out
		}
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	t.Fatalf("pid %d never came back, even in a PID namespace of the test's own", pid)
	return nil, nil
}

// R63, A25: after the adapter was reaped its pid, and so its process group id, may be
// given to an unrelated process. The process-group fallback must then not kill that
// process or its group, which a later Kill (lifecycle's supervisor, or
// Reservations.Reverify long after) would otherwise do.
func TestKillSparesRecycledPid(t *testing.T) {
	requireRoot(t)
	if !inOwnPidNamespace(t) {
		return
	}
	tree := startHelper(t, Config{Isolation: IsolationProcessGroup}, "block")
	pid := tree.Pid()
	tree.Stdin().Close() // the helper exits on EOF
	ctx := ctxBound(t)
	if !tree.waitExited(ctx) {
		t.Fatal("adapter not reaped")
	}
	in, out := startWithPid(t, pid)
	if err := tree.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	var ue *UnverifiedError
	if err := tree.Verify(ctx); !errors.As(err, &ue) {
		t.Fatalf("Verify = %v, want *UnverifiedError", err)
	}
	for _, p := range ue.Pids {
		if p == pid {
			t.Errorf("Verify names the unrelated process %d as a survivor", pid)
		}
	}
	// kill(2) makes SIGKILL pending before it returns, and a process with SIGKILL
	// pending never runs user code again: an echo after Kill proves it was spared.
	if _, err := io.WriteString(in, "alive\n"); err != nil {
		t.Fatalf("Kill of an ended tree killed unrelated process %d, which reused its pid: %v", pid, err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "alive\n" {
		t.Fatalf("Kill of an ended tree killed unrelated process %d, which reused its pid: %q, %v", pid, line, err)
	}
}

// R64: in the process-group fallback, group members still running when the adapter
// exits are recorded before it is reaped, so a Kill after the reap still ends them.
func TestPgroupKillAfterExitEndsMembers(t *testing.T) {
	tree, pids := startTree(t, IsolationProcessGroup, "exit")
	ctx := ctxBound(t)
	if !tree.waitExited(ctx) {
		t.Fatal("adapter not reaped")
	}
	if !pidAlive(pids["sleeper"]) {
		t.Fatal("sleeper gone before Kill")
	}
	if err := tree.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	waitGone(t, map[string]int{"sleeper": pids["sleeper"]})
}

// prewarmThreads makes the Go runtime create its threads now. Threads take pids from
// the namespace too, and the runtime keeps a thread it started: one started between a
// write of ns_last_pid and the fork that should get the next pid would take that pid
// for good. With idle threads at hand the runtime starts no new one in that window.
func prewarmThreads() {
	var locked, wg sync.WaitGroup
	release := make(chan struct{})
	for range 4 * runtime.GOMAXPROCS(0) {
		locked.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // one thread each, all held at once
			locked.Done()
			<-release
			runtime.UnlockOSThread() // the thread stays, idle, for later use
		}()
	}
	locked.Wait()
	close(release)
	wg.Wait()
}
