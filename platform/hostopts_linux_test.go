package platform

import (
	"bufio"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// setHostOptions sets o for the test and restores the defaults after it.
func setHostOptions(t *testing.T, o HostOptions) {
	t.Helper()
	if err := SetHostOptions(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := SetHostOptions(HostOptions{}); err != nil {
			t.Error(err)
		}
	})
}

// adapterHas reports whether the "fds" helper has a descriptor open on path.
func adapterHas(t *testing.T, path string) bool {
	t.Helper()
	tree := startHelper(t, Config{}, "fds")
	out, err := io.ReadAll(tree.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, target, _ := strings.Cut(line, " "); target == path {
			return true
		}
	}
	return false
}

func cloexec(t *testing.T, fd int) bool {
	t.Helper()
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.FD_CLOEXEC != 0
}

// Marking the host's inherited descriptors close-on-exec is the default,
// visible (MarkedCloseOnExec) and can be turned off (KeepInheritedFDs), in which case
// such a descriptor reaches the adapter and the host's descriptor is left alone.
func TestHostOptionsInheritedFDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "planted")
	planted, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT, 0o600) // no O_CLOEXEC on purpose
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(planted)
	// The marks of this test's run (an earlier run's may name the same number).
	earlier := len(MarkedCloseOnExec())
	marked := func() []int { return MarkedCloseOnExec()[earlier:] }

	setHostOptions(t, HostOptions{KeepInheritedFDs: true})
	if !adapterHas(t, path) {
		t.Fatalf("with KeepInheritedFDs the planted fd %d did not reach the adapter", planted)
	}
	if cloexec(t, planted) || slices.Contains(marked(), planted) {
		t.Fatal("with KeepInheritedFDs the host's descriptor was changed")
	}

	if err := SetHostOptions(HostOptions{}); err != nil {
		t.Fatal(err)
	}
	if adapterHas(t, path) {
		t.Fatalf("by default the planted fd %d leaked into the adapter", planted)
	}
	if !cloexec(t, planted) || !slices.Contains(marked(), planted) {
		t.Fatalf("planted fd %d not marked, or not reported in %v", planted, marked())
	}
}

// Marking inherited descriptors is a routine detail of a host's first start: logged at
// DEBUG, not at INFO where every host start would show it.
func TestInheritedFDsLoggedAtDebug(t *testing.T) {
	path := filepath.Join(t.TempDir(), "planted")
	planted, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT, 0o600) // no O_CLOEXEC on purpose
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(planted)
	var out testkit.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Trace})
	protectInheritedFds(&Config{Logger: log})
	if !cloexec(t, planted) {
		t.Fatalf("planted fd %d not marked", planted)
	}
	// The package's tests run one at a time (none is parallel): this call marked it.
	if got := out.String(); !strings.Contains(got, "[DEBUG] marked inherited descriptors") {
		t.Errorf("not logged at DEBUG:\n%s", got)
	}
}

func subreaperSet(t *testing.T) bool {
	t.Helper()
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	return v != 0
}

// startNsTree starts the nsTree helper (an adapter whose setsid daemon double-forks
// away) with iso, waits until it is ready and returns its tree and the helper's pids,
// which are killed at the end of the test if still running (bound now, by pidfd).
func startNsTree(t *testing.T, iso Isolation) (*Tree, map[string]int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pids")
	tree, err := Start(ctxBound(t), Config{Path: mustExecutable(), Args: []string{nsTreeArg, pidfile},
		Isolation: iso, Env: []string{"GORACE=atexit_sleep_ms=0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, tree) })
	if line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n'); line != "ready\n" {
		t.Fatalf("adapter said %q", line)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(killLater(pids))
	return tree, pids
}

// ChildSubreaper is the host's explicit choice; with it, the double-forked
// setsid daemon of an adapter that has only its process group is re-parented to the
// host (visible, killable) instead of to init, and trees report MechSubreaper.
func TestHostOptionsChildSubreaper(t *testing.T) {
	if subreaperSet(t) {
		t.Fatal("the test process is a subreaper before any option was set")
	}
	setHostOptions(t, HostOptions{ChildSubreaper: true})
	if !subreaperSet(t) || !currentHostOptions().ChildSubreaper {
		t.Fatal("ChildSubreaper not in effect")
	}
	tree, pids := startNsTree(t, IsolationProcessGroup)
	if m := tree.Supervision().Mechanism; !m.Has(MechSubreaper) || m.Proves() {
		t.Fatalf("mechanism %v, want subreaper without proof", m)
	}
	daemon := pids["daemon"]
	st, err := readStat(daemon)
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != selfPid() {
		t.Fatalf("daemon %d has parent %d, want the host %d", daemon, st.ppid, selfPid())
	}
	// The host may now kill and must reap it.
	if err := unix.Kill(daemon, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(daemon, &ws, 0, nil); err != nil || !ws.Signaled() {
		t.Fatalf("reaping the daemon: %v %v", ws, err)
	}
	if err := SetHostOptions(HostOptions{}); err != nil || subreaperSet(t) {
		t.Fatalf("clearing ChildSubreaper: %v", err)
	}
	if err := tree.Kill(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	if err := tree.Verify(ctxBound(t)); !errors.Is(err, ErrUnverified) {
		t.Fatalf("verify = %v, want unverified (a subreaper gives no proof)", err)
	}
}

// With ChildSubreaper and a cgroup but no PID namespace, the escaped daemon
// re-parented to the host is killed with the cgroup, and Close reaps it: no zombie is
// left to the host.
func TestChildSubreaperReapsCgroupOrphans(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	setHostOptions(t, HostOptions{ChildSubreaper: true})
	tree, pids := startNsTree(t, IsolationNoPIDNamespace)
	if m := tree.Supervision().Mechanism; !m.Has(MechCgroup | MechSubreaper) {
		t.Fatalf("mechanism %v, want cgroup and subreaper", m)
	}
	daemon := pids["daemon"]
	if st, err := readStat(daemon); err != nil || st.ppid != selfPid() {
		t.Fatalf("daemon %d: %+v %v, want the host %d as its parent", daemon, st, err, selfPid())
	}
	if err := tree.Kill(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	wantNoProof(t, tree, tree.Verify(ctxBound(t))) // as root: see TestKillWholeTree
	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := readStat(daemon); err == nil {
		t.Fatalf("daemon %d still in /proc after Close: state %c, parent %d", daemon, st.state, st.ppid)
	}
}
