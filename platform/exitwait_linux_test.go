package platform

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// threadCount is the number of this process's OS threads.
func threadCount(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// awaitExit returns when the child exits, leaves it unreaped (its status is still
// there for Wait), and does not return before.
func TestAwaitExit(t *testing.T) {
	cmd := helperCmd("block")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- awaitExit(cmd.Process.Pid) }()
	select {
	case ok := <-done:
		t.Fatalf("awaitExit returned %v while the child runs", ok)
	case <-time.After(50 * time.Millisecond):
	}
	stdin.Close() // the helper exits at end of input
	if ok := <-done; !ok {
		t.Fatal("awaitExit reported that it could not wait (pidfds unavailable?)")
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatalf("the child was reaped: %v", err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] != "Z" {
		t.Fatalf("child state %q, want Z (exited, unreaped)", f)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Wait after awaitExit: %v", err)
	}
}

// A running tree holds no OS thread while it waits for its process to exit: an idle
// host with many adapters does not pay a thread (and its stacks) per adapter.
func TestRunningTreesHoldNoThread(t *testing.T) {
	const n = 24
	// Warm up: whatever threads starting and ending a tree needs now exist.
	for range 2 {
		shutdown(t, startHelper(t, Config{}, "block"))
	}
	before := threadCount(t)
	trees := make([]*Tree, n)
	for i := range trees {
		trees[i] = startHelper(t, Config{}, "block")
	}
	// Each reaper is waiting once its goroutine is in beforeReap (blocked in waitid
	// on a thread, or parked on the pidfd).
	waitFor(t, func() bool { return goroutinesIn("platform.(*osTree).beforeReap") >= n })
	if grew := threadCount(t) - before; grew >= n/2 {
		t.Fatalf("%d running trees added %d threads", n, grew)
	}
	for _, tr := range trees {
		select {
		case <-tr.Exited():
			t.Fatalf("tree %d reported exited while it runs", tr.Pid())
		default:
		}
	}
}

// goroutinesIn counts the goroutines whose stack has a frame of fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			count++
		}
	}
	return count
}

// waitFor polls cond until it holds, failing t after the test bound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, bound, cond, "condition not reached")
}
