package platform

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: PID namespaces and cgroup creation are privileged here")
	}
}

// requireCgroup skips unless this process may create a child of its own cgroup v2.
func requireCgroup(t *testing.T) string {
	t.Helper()
	dir, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2: %v", err)
	}
	probe := filepath.Join(dir, fmt.Sprintf("akprobe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		t.Skipf("may not create cgroups under %s: %v", dir, err)
	}
	_ = unix.Rmdir(probe)
	return dir
}

func pidAlive(pid int) bool {
	s, err := readStat(pid)
	return err == nil && s.alive()
}

// waitGone polls /proc until none of pids runs code (a zombie runs nothing).
func waitGone(t *testing.T, pids map[string]int) {
	t.Helper()
	var left []string
	if !testkit.Within(bound, func() bool {
		left = left[:0]
		for role, pid := range pids {
			if pidAlive(pid) {
				left = append(left, fmt.Sprintf("%s=%d", role, pid))
			}
		}
		return len(left) == 0
	}) {
		t.Fatalf("still running: %v", left)
	}
}

// killLater returns a cleanup that SIGKILLs those of pids still running. It opens a
// pidfd for each process now, while it runs: the cleanup signals through the pidfd, so
// a pid that ended and was reused by an unrelated process meanwhile is never killed.
func killLater(pids map[string]int) func() {
	var fds []int
	for _, pid := range pids {
		s, err := readStat(pid)
		if err != nil || !s.alive() {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if !sameProcess(pid, s.start) { // reused between the stat and the open
			unix.Close(fd)
			continue
		}
		fds = append(fds, fd)
	}
	return func() {
		for _, fd := range fds {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		}
	}
}

func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading a line: %q, %v", line, err)
	}
	return strings.TrimSpace(line)
}

var isolations = []struct {
	name string
	iso  Isolation
}{
	{"auto", IsolationAuto},
	{"no-pidns", IsolationNoPIDNamespace},
	{"pgroup", IsolationProcessGroup},
}

// startTree starts the "tree" helper: adapter, a grandchild in its group holding its
// stdout, and a double-forked setsid grandchild ("daemon").
func startTree(t *testing.T, iso Isolation, extra ...string) (*Tree, map[string]int) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	tree := startHelper(t, Config{Isolation: iso}, "tree", append([]string{pidfile}, extra...)...)
	if line := readLine(t, tree.Stdout()); line != "ready" {
		t.Fatalf("helper said %q", line)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	delete(pids, "middle") // it has exited already: that is what orphans the daemon
	t.Cleanup(killLater(pids))
	return tree, pids
}

func TestMechanismChosen(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	want := map[Isolation]Mechanism{
		IsolationAuto:           MechCgroup | MechPidNamespace | MechProcessGroup | MechParentDeathSignal,
		IsolationNoPIDNamespace: MechCgroup | MechProcessGroup | MechParentDeathSignal,
		IsolationProcessGroup:   MechProcessGroup | MechParentDeathSignal,
	}
	for _, is := range isolations {
		tree := startHelper(t, Config{Isolation: is.iso}, "block")
		if tree.Supervision().Mechanism != want[is.iso] {
			t.Errorf("%s: mechanism %s, want %s", is.name, tree.Supervision().Mechanism, want[is.iso])
		}
	}
}

// R63, R64, A25: Kill ends the whole tree, and Verify proves it where a mechanism can.
func TestKillWholeTree(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			tree, pids := startTree(t, is.iso)
			for role, pid := range pids {
				if !pidAlive(pid) {
					t.Fatalf("%s %d not running before Kill", role, pid)
				}
			}
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			err := tree.Verify(ctx)
			if is.iso == IsolationProcessGroup {
				// The walk cannot see the orphaned setsid daemon: honest "unverified".
				var ue *UnverifiedError
				if !errors.As(err, &ue) || !errors.Is(err, ErrUnverified) {
					t.Fatalf("Verify = %v, want *UnverifiedError", err)
				}
				waitGone(t, map[string]int{"adapter": pids["adapter"], "sleeper": pids["sleeper"]})
				if !pidAlive(pids["daemon"]) {
					t.Fatalf("daemon %d died: the process-group fallback was expected to miss it", pids["daemon"])
				}
				return
			}
			if is.iso == IsolationNoPIDNamespace {
				// The cgroup killed the whole tree, but as root the adapter may write
				// every ancestor's cgroup.procs: its emptiness proves nothing.
				wantNoProof(t, tree, err)
				waitGone(t, pids)
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			for role, pid := range pids { // verified means gone now, no polling
				if pidAlive(pid) {
					t.Errorf("%s %d still running after Verify", role, pid)
				}
			}
		})
	}
}

// wantNoProof fails unless err is the *UnverifiedError of a tree whose cgroup gives no
// proof, with the reason its Supervision names.
func wantNoProof(t *testing.T, tree *Tree, err error) {
	t.Helper()
	var ue *UnverifiedError
	why := tree.Supervision().NoProof
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnverified) || why == "" || ue.Reason != why ||
		!strings.Contains(why, "cgroup.procs, an ancestor of its cgroup") {
		t.Fatalf("Verify = %v, NoProof %q: want unverified, an ancestor's cgroup.procs being writable", err, why)
	}
}

// R52, R64: Exited is about the direct child only; a grandchild holding stdout does not
// delay it. In a PID namespace the adapter's exit ends its descendants too.
func TestExitWhileGrandchildHoldsStdout(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	for _, is := range isolations[:2] {
		t.Run(is.name, func(t *testing.T) {
			tree, pids := startTree(t, is.iso, "exit")
			select {
			case <-tree.Exited():
			case <-time.After(bound):
				t.Fatal("Exited not closed after the adapter exited")
			}
			if tree.ExitState() == nil || !tree.ExitState().Success() {
				t.Fatalf("exit state %v", tree.ExitState())
			}
			if is.iso == IsolationAuto {
				if _, err := io.ReadAll(tree.Stdout()); err != nil { // EOF: the sleeper died
					t.Fatal(err)
				}
				waitGone(t, pids)
				if err := tree.Verify(ctxBound(t)); err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !pidAlive(pids["sleeper"]) {
				t.Fatal("sleeper gone without a PID namespace")
			}
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Fatal(err)
			}
			wantNoProof(t, tree, tree.Verify(ctx)) // as root: see TestKillWholeTree
			waitGone(t, pids)
		})
	}
}

// A24: hosts do not depend on SIGTERM; an adapter ignoring it still ends on Kill.
func TestSignalIgnoredThenKilled(t *testing.T) {
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			tree := startHelper(t, Config{Isolation: is.iso}, "ignoreterm")
			if line := readLine(t, tree.Stdout()); line != "ready" {
				t.Fatalf("helper said %q", line)
			}
			if err := tree.signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			tree.Stdin().Close()
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Fatal(err)
			}
			if !tree.waitExited(ctx) {
				t.Fatal("not reaped")
			}
			ws := tree.ExitState().Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("ended by %v, want SIGKILL (SIGTERM must have been ignored)", ws)
			}
		})
	}
}

// No descriptor of the host leaks into the adapter: only 0, 1, 2 plus what its own
// runtime opened. The test also plants a descriptor without close-on-exec in the host,
// as a host's parent or C code would.
func TestNoHostDescriptorLeaks(t *testing.T) {
	planted, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // no O_CLOEXEC on purpose
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(planted)
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			tree := startHelper(t, Config{Isolation: is.iso}, "fds")
			out, err := io.ReadAll(tree.Stdout())
			if err != nil {
				t.Fatal(err)
			}
			var fds []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				fd, target, _ := strings.Cut(line, " ")
				// The helper's own: the directory it lists, its netpoller, and the cgroup
				// CPU limit files its Go runtime reads to size GOMAXPROCS.
				own := target == "listing" || target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" ||
					strings.HasPrefix(filepath.Base(target), "cpu.") && strings.HasPrefix(target, "/sys/fs/cgroup/")
				if n, _ := strconv.Atoi(fd); n > 2 && !own {
					t.Errorf("leaked descriptor %s -> %s", fd, target)
				}
				fds = append(fds, fd)
			}
			for _, want := range []string{"0", "1", "2"} {
				if !slices.Contains(fds, want) {
					t.Errorf("descriptor %s missing in %v", want, fds)
				}
			}
		})
	}
}

func TestCgroupChosenAndRemoved(t *testing.T) {
	requireRoot(t)
	own := requireCgroup(t)
	tree := startHelper(t, Config{}, "block")
	path := tree.cgroupPath()
	if filepath.Dir(path) != own || !strings.HasPrefix(filepath.Base(path), cgroupPrefix) {
		t.Fatalf("cgroup %q not a per-adapter cgroup under %q", path, own)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", tree.Pid()))
	if err != nil || !strings.Contains(string(b), "0::") || !strings.HasSuffix(strings.TrimSpace(string(b)), "/"+filepath.Base(path)) {
		t.Fatalf("adapter's /proc cgroup %q (%v) is not %s", b, err, path)
	}
	shutdown(t, tree)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cgroup %s not removed: %v", path, err)
	}
}

func TestCgroupParentOption(t *testing.T) {
	requireRoot(t)
	own := requireCgroup(t)
	parent := filepath.Join(own, fmt.Sprintf("akparent-%d", os.Getpid()))
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Rmdir(parent) })
	tree := startHelper(t, Config{CgroupParent: parent}, "block")
	if got := filepath.Dir(tree.cgroupPath()); got != parent {
		t.Fatalf("cgroup under %q, want %q", got, parent)
	}
	shutdown(t, tree)
}

func TestResourceLimits(t *testing.T) {
	res := Resources{MemoryBytes: 256 << 20, MaxProcesses: 64}
	tree := startHelper(t, Config{Resources: res}, "block")
	var le *LimitError
	hasErr := errors.As(tree.LimitErr(), &le)
	v1 := tree.sys.v1
	if tree.cgroupPath() == "" && v1 == nil {
		if !hasErr || !slices.Equal(le.Limits, []string{"memory", "processes"}) {
			t.Fatalf("without a cgroup both limits must be reported unsupported, got %v", tree.LimitErr())
		}
		return
	}
	// Applied through cgroup v2, or else through the v1 fallback.
	v1files := map[string]string{"memory": "/nonexistent", "processes": "/nonexistent"}
	if v1 != nil && v1.mem != nil {
		v1files["memory"] = v1.mem.file("memory.limit_in_bytes")
	}
	if v1 != nil && v1.pids != nil {
		v1files["processes"] = v1.pids.file("pids.max")
	}
	for _, c := range []struct{ limit, file, want string }{
		{"memory", "memory.max", strconv.FormatInt(res.MemoryBytes, 10)},
		{"processes", "pids.max", strconv.Itoa(res.MaxProcesses)},
	} {
		b, err := os.ReadFile(filepath.Join(tree.cgroupPath(), c.file))
		if tree.cgroupPath() == "" || err != nil {
			b, err = os.ReadFile(v1files[c.limit])
		}
		applied := err == nil && strings.TrimSpace(string(b)) == c.want
		reported := hasErr && slices.Contains(le.Limits, c.limit) && errors.Is(le, ErrLimitUnsupported)
		if applied == reported {
			t.Errorf("%s: applied=%v reported unsupported=%v (exactly one must hold)", c.limit, applied, reported)
		}
	}
}

// The public Sweep looks under this host's own cgroup: it removes a cgroup left there
// by a dead host and kills what is in it, and leaves the cgroups of live hosts alone.
// Other hosts on the machine sweep the same parent and may remove the leftover first,
// so the test asserts what it owns — the leftover is gone, its process killed, nothing
// of it reported failed; TestSweepDirReport checks the report's contents on a private
// parent.
func TestSweepLeftoverCgroup(t *testing.T) {
	requireRoot(t)
	own := requireCgroup(t)
	deadPid, start := deadHost(t)
	leftover := filepath.Join(own, fmt.Sprintf("%s%d-%d-1", cgroupPrefix, deadPid, start))
	reused := filepath.Join(own, fmt.Sprintf("%s%d-%d-1", cgroupPrefix, os.Getpid(), start+1))
	live := filepath.Join(own, fmt.Sprintf("%s%d-%d-999999", cgroupPrefix, os.Getpid(), start))
	for _, d := range []string{leftover, reused, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range []string{leftover, reused, live} {
			_ = (&cgroup{path: d}).kill()
			_ = unix.Rmdir(d)
		}
	})
	orphan := orphanIn(t, leftover, false)

	rep, err := Sweep(ctxBound(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(rep.Swept, func(it SweptItem) bool { return it.Path == live }) {
		t.Error("the live host's cgroup was swept")
	}
	wantKilled(t, orphan)
	wantSweptAway(t, rep, leftover, reused)
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live host's cgroup removed: %v", err)
	}
}
