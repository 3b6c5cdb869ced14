package platform

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// exhaustUID is the ordinary user TestHostSurvivesExhaustingAdapter runs its host as:
// a uid of this test run's own (no account has it), so that the tasks and inotify
// instances counted against it are the test's alone, whatever else runs on the machine
// as nobody, another run of this test included.
var exhaustUID = 3_000_000 + os.Getpid()%1_000_000

func init() {
	// exhaust: args as bomb's. Create inotify instances until refused (at most 4096,
	// kept open), report "inotify N ERRNO", then run bomb.
	osHelpers["exhaust"] = func(args []string) int {
		n, why := 0, "none"
		for range 4096 {
			if _, err := unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
				why = unix.ErrnoName(err.(unix.Errno))
				break
			}
			n++
		}
		fmt.Printf("inotify %d %s\n", n, why)
		return osHelpers["bomb"](args)
	}
}

// A sandboxed adapter that takes every inotify instance and every process it can get
// leaves its host's user enough to go on: inotify is refused to it, and it forks until
// its default process limit refuses it (EAGAIN). The host then still starts OS threads
// and creates an inotify instance, Kill and Close end the tree cleanly (Verify proves
// it where the mode proves ends), and none of the adapter's processes remains.
//
// As an ordinary user (a uid of the test's own) the host first lowers its own
// RLIMIT_NPROC to what it uses now plus the default limit plus a margin: an adapter
// not held to the default would then take the rest of the user's quota, and the host
// could start no thread (the Go runtime aborts). As root, which RLIMIT_NPROC exempts,
// the pids cgroup holds the adapter. Modes where nothing applies the limit (LimitErr)
// are skipped: there the host is not protected, as Supervision says.
func TestHostSurvivesExhaustingAdapter(t *testing.T) {
	rootAndNobody(t, nobodyRun{uid: exhaustUID}, testHostSurvivesExhaustingAdapter)
}

func testHostSurvivesExhaustingAdapter(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	if os.Geteuid() != 0 {
		capTasks(t, DefaultSandboxMaxProcesses+256)
	}
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			marker := fmt.Sprintf("3599.%d%d", os.Getpid(), time.Now().UnixNano()%1e6) // sleep's argument, to find its processes by
			cfg := Config{Isolation: is.iso, Sandbox: &Sandbox{Exec: []string{sleep}}}
			tree := startHelper(t, cfg, "exhaust", "2000", sleep, marker)
			sup := tree.Supervision()
			if err := tree.LimitErr(); err != nil {
				t.Skipf("%s: nothing applies the process limit, so the host is not protected: %v", sup, err)
			}
			out := bufio.NewReader(tree.Stdout())
			line, _ := out.ReadString('\n')
			if got := strings.TrimSpace(line); got != "inotify 0 EPERM" {
				t.Errorf("inotify: the adapter said %q, want %q (refused by the sandbox)", got, "inotify 0 EPERM")
			}
			line, _ = out.ReadString('\n')
			var n int
			var eagain bool
			if _, err := fmt.Sscanf(line, "started %d %t", &n, &eagain); err != nil {
				t.Fatalf("adapter said %q", line)
			}
			if !eagain || n >= DefaultSandboxMaxProcesses {
				t.Errorf("the adapter started %d processes (stopped by EAGAIN: %v), want fewer than %d (%s)", n, eagain, DefaultSandboxMaxProcesses, sup)
			}
			// The host, while the adapter holds all it got: new OS threads, and inotify.
			hostStartsThreads(32)
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				t.Errorf("the host cannot create an inotify instance: %v", err)
			} else {
				unix.Close(fd)
			}
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Errorf("Kill: %v", err)
			}
			verr := tree.Verify(ctx)
			if verr != nil && (treeProves(sup) || !errors.Is(verr, ErrUnverified)) {
				t.Errorf("Verify: %v (%s)", verr, sup)
			}
			if err := tree.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if left := processesWithArg(marker); len(left) > 0 && (verr == nil || !waitNoArg(marker)) {
				t.Errorf("after Close, processes of the adapter remain: %v (%s)", processesWithArg(marker), sup)
			}
			t.Logf("%s: the adapter started %d processes", sup.Mechanism, n)
		})
	}
}

// capTasks lowers this process's soft RLIMIT_NPROC to the tasks its real uid has now
// plus room, and restores it after the test.
func capTasks(t *testing.T, room int) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(tasksOfUID(os.Getuid()) + room)
	if lim.Cur > old.Cur {
		t.Skipf("RLIMIT_NPROC %d is already below what the test needs", old.Cur)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		t.Fatal(err)
	}
	t.Logf("RLIMIT_NPROC of the host: %d", lim.Cur)
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NPROC, &old) })
}

// tasksOfUID counts the tasks (threads) of the processes whose real uid is uid.
func tasksOfUID(uid int) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var real, threads int
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				real, _ = strconv.Atoi(strings.Fields(v)[0])
			}
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == uid {
			n += threads
		}
	}
	return n
}

// processesWithArg lists the living processes that have arg among their arguments.
func processesWithArg(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte("\x00"+arg+"\x00")) {
			continue
		}
		if st, err := readStat(pid); err == nil && st.alive() {
			out = append(out, pid)
		}
	}
	return out
}

// waitNoArg waits, up to bound, until no living process has arg among its arguments.
func waitNoArg(arg string) bool {
	return testkit.Within(bound, func() bool { return len(processesWithArg(arg)) == 0 })
}
