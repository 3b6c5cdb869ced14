package platform

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// startWithPid starts the "echo" helper as the leader of its own process group with
// the given pid, recycling it through ns_last_pid (root only). Other processes of the
// machine may take the pid first: it retries, and skips when it never gets it.
func startWithPid(t *testing.T, pid int) (stdin io.WriteCloser, stdout io.Reader) {
	t.Helper()
	for range 200 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Skipf("cannot choose the next pid: %v", err)
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
	t.Skipf("pid %d never came back", pid)
	return nil, nil
}

// R63, A25: after the adapter was reaped its pid, and so its process group id, may be
// given to an unrelated process. The process-group fallback must then not kill that
// process or its group, which a later Kill (lifecycle's supervisor, or
// Reservations.Reverify long after) would otherwise do.
func TestKillSparesRecycledPid(t *testing.T) {
	requireRoot(t)
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
