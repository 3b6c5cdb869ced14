package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

func init() {
	// die: exit with the status args[0] ("exit N"), or by the signal ("signal N").
	osHelpers["die"] = func(args []string) int {
		how, v, _ := strings.Cut(args[0], " ")
		n, _ := strconv.Atoi(v)
		if how == "signal" {
			_ = unix.Kill(os.Getpid(), unix.Signal(n))
			testkit.BlockForever()
		}
		return n
	}
	// reaperhost: a host process that starts a sandboxed "tree" adapter in process-group
	// mode (args[0] the pid file, whose directory the sandbox may write), reports
	// "ready REAPER", and waits to be killed.
	osHelpers["reaperhost"] = func(args []string) int {
		tree, err := startReaperTree(args[0])
		if err != nil {
			fmt.Println("error", err)
			return 6
		}
		line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n')
		record(args[0], "host")
		fmt.Printf("%s %d\n", strings.TrimSpace(line), tree.pid)
		testkit.BlockForever()
		return 0
	}
}

// startReaperTree starts the "tree" helper sandboxed in process-group mode.
func startReaperTree(pidfile string, args ...string) (*Tree, error) {
	return Start(context.Background(), Config{
		Path: mustExecutable(), Args: append([]string{helperArg, "tree", pidfile}, args...),
		Isolation: IsolationProcessGroup, Env: []string{"GORACE=atexit_sleep_ms=0"},
		Sandbox: &Sandbox{Write: []string{filepath.Dir(pidfile)}},
	})
}

// requireReaperProof skips where the reaper cannot prove the end (no Landlock signal
// scope or no seccomp filter): what the tests below assert needs the proof.
func requireReaperProof(t *testing.T, tree *Tree) {
	t.Helper()
	sup := tree.Supervision()
	if !sup.Mechanism.Has(MechReaper) {
		t.Fatalf("%s: no reaper", sup)
	}
	if sup.NoProof != "" {
		t.Skipf("the reaper proves nothing here: %s", sup.NoProof)
	}
}

// An adapter that double-forks a setsid daemon and exits: its reaper kills the daemon
// (and the grandchild in its group) before it exits, so after the adapter's exit nothing
// of the tree is left, Verify proves it and Close reports no error. As root and as nobody.
func TestReaperEndsOrphansOfExitedAdapter(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testReaperEndsOrphansOfExitedAdapter)
}

func testReaperEndsOrphansOfExitedAdapter(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	tree, err := startReaperTree(pidfile, "exit")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, tree) })
	requireReaperProof(t, tree)
	if line := readLine(t, tree.Stdout()); line != "ready" {
		t.Fatalf("helper said %q", line)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	delete(pids, "middle")
	t.Cleanup(killLater(pids))
	ctx := ctxBound(t)
	if !tree.waitExited(ctx) {
		t.Fatal("the reaper did not exit after the adapter")
	}
	if code := tree.ExitState().ExitCode(); code != 0 {
		t.Errorf("exit state %v, want the adapter's: 0", tree.ExitState())
	}
	if err := tree.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := tree.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitGone(t, pids)
}

// The reaper exits as its adapter did: the same exit status, or the same signal.
func TestReaperMirrorsExit(t *testing.T) {
	for _, how := range []string{"exit 7", "signal 15", "signal 9"} {
		t.Run(how, func(t *testing.T) {
			tree := startHelper(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{}}, "die", how)
			requireReaperProof(t, tree)
			if !tree.waitExited(ctxBound(t)) {
				t.Fatal("not exited")
			}
			ws := tree.ExitState().Sys().(syscall.WaitStatus)
			kind, v, _ := strings.Cut(how, " ")
			n, _ := strconv.Atoi(v)
			if kind == "exit" && !(ws.Exited() && ws.ExitStatus() == n) ||
				kind == "signal" && !(ws.Signaled() && int(ws.Signal()) == n) {
				t.Fatalf("exit state %v, want the adapter's (%s)", tree.ExitState(), how)
			}
			if err := tree.Verify(ctxBound(t)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

// A reaper killed with SIGKILL (not by the adapter, which cannot signal it) has not
// reported its descendants reaped: Verify says unverified, and why. As root and as
// nobody.
func TestReaperKilledUnverified(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testReaperKilledUnverified)
}

func testReaperKilledUnverified(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	tree, err := startReaperTree(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tree.Close() }) // unverified, as asserted below
	requireReaperProof(t, tree)
	if line := readLine(t, tree.Stdout()); line != "ready" {
		t.Fatalf("helper said %q", line)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	delete(pids, "middle")
	t.Cleanup(killLater(pids))
	if err := unix.Kill(tree.pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx := ctxBound(t)
	if !tree.waitExited(ctx) {
		t.Fatal("the reaper was not reaped")
	}
	_ = tree.Kill(ctx)
	var ue *UnverifiedError
	if err := tree.Verify(ctx); !errors.As(err, &ue) || !strings.Contains(ue.Reason, "reaper ended") || !ue.Mechanism.Has(MechReaper) {
		t.Fatalf("Verify = %v, want unverified: the reaper ended without its report", err)
	}
}

// A host killed with SIGKILL takes the reaper with it (SIGTERM, its parent-death
// signal), and the reaper takes the adapter's whole tree, the double-forked setsid
// daemon included. As root and as nobody.
func TestReaperHostSIGKILLed(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testReaperHostSIGKILLed)
}

func testReaperHostSIGKILLed(t *testing.T) {
	if _, err := landlockABI(); err != nil {
		t.Skip(err)
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	host := helperCmd("reaperhost", pidfile)
	host.Env = []string{"GORACE=atexit_sleep_ms=0"}
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "ready" {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("host said %q, %v", line, err)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	delete(pids, "middle")
	delete(pids, "host")
	pids["reaper"], _ = strconv.Atoi(f[1])
	t.Cleanup(killLater(pids))
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	waitGone(t, pids)
}

// The reaper keeps none of the adapter's pipes: an adapter that closes its stdout
// while it runs gives the host its end of file at once, and ends at the end of its
// input. As root and as nobody.
func TestReaperHoldsNoAdapterPipe(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testReaperHoldsNoAdapterPipe)
}

func testReaperHoldsNoAdapterPipe(t *testing.T) {
	tree := startHelper(t, Config{Isolation: IsolationProcessGroup, Sandbox: &Sandbox{}}, "quiet", "-")
	requireReaperProof(t, tree)
	eof := make(chan error, 1)
	go func() {
		out, err := io.ReadAll(tree.Stdout())
		if err == nil && string(out) != "ready\n" {
			err = fmt.Errorf("the adapter said %q", out)
		}
		eof <- err
	}()
	ctx := ctxBound(t)
	select {
	case err := <-eof:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("no end of file on the adapter's stdout: a copy of it is held open")
	}
	select {
	case <-tree.Exited():
		t.Fatal("the adapter ended before its input did")
	default:
	}
	tree.Stdin().Close()
	if !tree.waitExited(ctx) {
		t.Fatal("the adapter did not end at the end of its input")
	}
	if err := tree.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}
