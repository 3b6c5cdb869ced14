package platform

import (
	"bufio"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// R63, A25: on macOS Kill ends the adapter and its group, but Verify never reports the
// tree proven gone: the double-forked setsid daemon of the "tree" helper is out of
// reach, as the package doc says.
func TestDarwinVerifyNeverProves(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	tree := startHelper(t, Config{}, "tree", pidfile)
	if line, err := bufio.NewReader(tree.Stdout()).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	daemon, daemonStart := pids["daemon"], uint64(0)
	if p, err := procTable(); err == nil {
		for _, s := range p {
			if s.pid == daemon {
				daemonStart = s.start
			}
		}
	}
	t.Cleanup(func() {
		if daemonStart != 0 && sameProcess(daemon, daemonStart) {
			_ = syscall.Kill(daemon, syscall.SIGKILL)
		}
	})
	ctx := ctxBound(t)
	if err := tree.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	err = tree.Verify(ctx)
	var ue *UnverifiedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnverified) || len(ue.Pids) != 0 {
		t.Fatalf("Verify = %v, want *UnverifiedError with no survivors it could see", err)
	}
	table, err := procTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range table {
		if (s.pid == pids["adapter"] || s.pid == pids["sleeper"]) && s.alive() && s.pgid == tree.Pid() {
			t.Errorf("%d of the adapter's group still runs", s.pid)
		}
	}
	tree.sys.mu.Lock()
	reaped := tree.sys.reaped
	tree.sys.mu.Unlock()
	if !reaped {
		t.Error("the adapter was reaped but the tree does not know: its group id could be signalled after reuse")
	}
}
