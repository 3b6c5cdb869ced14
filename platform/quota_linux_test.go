package platform

import (
	"bufio"
	"errors"
	"fmt"
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

// A sandboxed adapter shares its user's quotas with the host: these tests check the
// ones the sandbox protects (inotify instances, the task count).

func init() {
	osHelpers["inotify"] = func([]string) int { // report whether inotify_init1 succeeds
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			fmt.Println("err", err)
			return 0
		}
		unix.Close(fd)
		fmt.Println("ok")
		return 0
	}
	// bomb: args max, program, its args. Start the program until a start fails or max
	// run, report "started N EAGAIN", keep them until stdin ends, then kill them.
	osHelpers["bomb"] = func(args []string) int {
		max, _ := strconv.Atoi(args[0])
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return 3
		}
		var kids []*os.Process
		var ferr error
		for range max {
			p, err := os.StartProcess(args[1], args[1:], &os.ProcAttr{Files: []*os.File{null, null, null}})
			if err != nil {
				ferr = err
				break
			}
			kids = append(kids, p)
		}
		fmt.Printf("started %d %v\n", len(kids), errors.Is(ferr, syscall.EAGAIN))
		_, _ = io.Copy(io.Discard, os.Stdin)
		for _, k := range kids {
			_ = k.Kill()
			_, _ = k.Wait()
		}
		return 0
	}
}

// A sandboxed adapter cannot create inotify instances (its user's, shared with the
// host) unless Sandbox.Inotify grants them; Supervision says which. As root and as
// nobody, with and without PID and user namespaces.
func TestSandboxInotify(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testSandboxInotify)
}

func testSandboxInotify(t *testing.T) {
	for _, is := range isolations {
		for _, c := range []struct {
			grant bool
			want  string
		}{{false, "err operation not permitted"}, {true, "ok"}} {
			tree := startHelper(t, Config{Isolation: is.iso, Sandbox: &Sandbox{Inotify: c.grant}}, "inotify")
			line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n')
			if got := strings.TrimSpace(line); got != c.want {
				t.Errorf("%s, Inotify %v: got %q, want %q", is.name, c.grant, got, c.want)
			}
			if want := inotifyDesc(&Sandbox{Inotify: c.grant}); !strings.Contains(tree.Supervision().Sandbox, want) {
				t.Errorf("%s, Inotify %v: supervision %q does not say %q", is.name, c.grant, tree.Supervision().Sandbox, want)
			}
		}
	}
	control := startHelper(t, Config{}, "inotify")
	if line, _ := bufio.NewReader(control.Stdout()).ReadString('\n'); strings.TrimSpace(line) != "ok" {
		t.Errorf("unsandboxed: %q, want ok", line)
	}
}

// A sandboxed adapter without Resources.MaxProcesses that forks until refused stops
// at DefaultSandboxMaxProcesses tasks (bounded here at 1200 should nothing stop it),
// with EAGAIN; the host still starts threads while the adapter holds them all, and
// ends the tree (Kill, Verify, Close). Supervision and LimitErr say what applied the default.
// As root a pids cgroup applies it; as nobody (no cgroup of its own) RLIMIT_NPROC in
// the adapter's user namespace.
func TestSandboxDefaultProcessLimit(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testSandboxDefaultProcessLimit)
}

func testSandboxDefaultProcessLimit(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	cfg := Config{Sandbox: &Sandbox{Exec: []string{sleep}}}
	tree := startHelper(t, cfg, "bomb", "1200", sleep, "3600")
	sup := tree.Supervision().Sandbox
	if err := tree.LimitErr(); err != nil {
		if !strings.Contains(sup, "tasks 512 (default) not applied") || !errors.Is(err, ErrLimitUnsupported) {
			t.Fatalf("LimitErr %v but supervision %q", err, sup)
		}
		if tree.Supervision().Mechanism.Has(MechUserNamespace) && !initialRoot() {
			t.Fatalf("the adapter has a user namespace of its own, yet RLIMIT_NPROC was not applied: %v", err)
		}
		t.Skipf("no pids cgroup or user namespace applies the limit here: %v", err)
	}
	if !strings.Contains(sup, "tasks 512 (default) by ") {
		t.Errorf("supervision %q does not name the default limit", sup)
	}
	line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n')
	var n int
	var eagain bool
	if _, err := fmt.Sscanf(line, "started %d %t", &n, &eagain); err != nil {
		t.Fatalf("adapter said %q", line)
	}
	if !eagain || n >= DefaultSandboxMaxProcesses || n < DefaultSandboxMaxProcesses/2 {
		t.Errorf("the adapter started %d processes (stopped by EAGAIN: %v), want fewer than %d, stopped by EAGAIN (%s)", n, eagain, DefaultSandboxMaxProcesses, sup)
	}
	// The host starts OS threads while the adapter holds its processes.
	hostStartsThreads(32)
	ctx := ctxBound(t)
	if err := tree.Kill(ctx); err != nil {
		t.Errorf("Kill: %v", err)
	}
	if err := tree.Verify(ctx); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if err := tree.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// hostStartsThreads makes the host start n OS threads at once (each goroutine locked to
// its own thread for a moment) and waits for them: a host whose user's process quota an
// adapter took aborts here ("pthread_create failed").
func hostStartsThreads(n int) {
	var locked, wg sync.WaitGroup
	release := make(chan struct{})
	for range n {
		locked.Add(1)
		wg.Go(func() {
			runtime.LockOSThread() // one thread each, all held at once
			defer runtime.UnlockOSThread()
			locked.Done()
			<-release
		})
	}
	locked.Wait()
	close(release)
	wg.Wait()
}
