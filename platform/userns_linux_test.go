package platform

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// These tests run a host as an ordinary user: the test binary (root here) copies itself
// to a directory nobody may read, and re-executes that copy as nobody, with an extra
// supplementary group, in one of the nsHost scenarios below. The adapters it starts
// are the same binary in a probe or helper mode. What the host and its adapters see is
// printed as JSON and checked here, against /proc as root sees it.

const (
	nsHostArg  = "adapterkit-userns-host"  // argv[1]: run an unprivileged host scenario
	nsProbeArg = "adapterkit-userns-probe" // argv[1]: an adapter reporting what it sees
	nsEuidArg  = "adapterkit-userns-euid"  // argv[1]: print the effective uid and exit
	nsTreeArg  = "adapterkit-userns-tree"  // argv[1]: an adapter with a grandchild and a double-forked setsid daemon
	nsSleepArg = "adapterkit-userns-sleep" // argv[1]: record argv[3] as role, sleep until killed
	nsForkArg  = "adapterkit-userns-fork"  // argv[1]: start a setsid "daemon", record "middle", exit

	nobodyUID  = 65534
	extraGroup = 4242 // a supplementary group of the unprivileged host, not mapped inside
	setuidUID  = 4243 // owner of the set-uid copy of the test binary
)

func init() {
	// Dispatched before TestMain so that helper_test.go's modes stay untouched.
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case nsProbeArg:
			os.Exit(runProbe(os.Args[2:]))
		case nsHostArg:
			os.Exit(runNSHost(os.Args[2], os.Args[3:]))
		case nsEuidArg:
			fmt.Println(os.Geteuid())
			os.Exit(0)
		case nsTreeArg, nsSleepArg, nsForkArg:
			os.Exit(runNSTree(os.Args[1], os.Args[2], os.Args[3:]))
		}
	}
}

// runNSTree runs the processes of an adapter tree; each records itself in pidfile.
func runNSTree(mode, pidfile string, args []string) int {
	self, _ := os.Executable()
	switch mode {
	case nsSleepArg:
		record(pidfile, args[0])
		for {
			testkit.BlockForever()
		}
	case nsForkArg:
		d := exec.Command(self, nsSleepArg, pidfile, "daemon")
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if d.Start() != nil {
			return 4
		}
		record(pidfile, "middle")
		waitRoles(pidfile, "daemon")
		return 0
	}
	record(pidfile, "adapter")
	sl := exec.Command(self, nsSleepArg, pidfile, "sleeper")
	sl.Stdout = os.Stdout // a grandchild holding the adapter's stdout
	if sl.Start() != nil || exec.Command(self, nsForkArg, pidfile).Run() != nil {
		return 5
	}
	waitRoles(pidfile, "sleeper", "daemon")
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for {
		testkit.BlockForever()
	}
}

// probeFacts is what an adapter sees of itself.
type probeFacts struct {
	Pid, Ppid, UID, GID, EUID int
	Groups                    []int
	ProcSelf                  int    // /proc/self: the pid in /proc's (the host's) namespace
	SetgroupsErr              string // setgroups to the own gid
	CapEff                    string
	SetuidEUID                int // euid of the set-uid copy run from inside (-1: not run)
}

func runProbe(args []string) int {
	f := probeFacts{Pid: os.Getpid(), Ppid: os.Getppid(), UID: os.Getuid(), GID: os.Getgid(), EUID: os.Geteuid(), SetuidEUID: -1}
	f.Groups, _ = syscall.Getgroups()
	s, _ := os.Readlink("/proc/self")
	f.ProcSelf, _ = strconv.Atoi(s)
	if err := syscall.Setgroups([]int{f.GID}); err != nil {
		f.SetgroupsErr = err.Error()
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				f.CapEff = strings.TrimSpace(v)
			}
		}
	}
	if len(args) > 0 && args[0] != "" {
		f.SetuidEUID = runEuid(args[0])
	}
	b, _ := json.Marshal(f)
	fmt.Println(string(b))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// runEuid runs the set-uid program and returns the euid it prints (-2 on failure).
func runEuid(path string) int {
	out, err := exec.Command(path, nsEuidArg).Output()
	if err != nil {
		return -2
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return -2
	}
	return n
}

// nsReport is what an unprivileged host scenario prints.
type nsReport struct {
	Mechanism   string
	Supervision string
	Dropped     []Dropped
	TreePid     int
	CgroupPath  string
	CgroupGone  bool        // the per-adapter cgroup was removed by Close
	Probe       *probeFacts `json:",omitempty"`
	HostGroups  []int
	HostSetuid  int // euid of the set-uid copy run by the host itself, outside a user namespace
	VerifyErr   string
	Unverified  bool
	CloseErr    string
	Elapsed     time.Duration
}

// runNSHost runs one scenario as the unprivileged host; args[0] is a directory it may write.
func runNSHost(scenario string, args []string) int {
	work, setuidCopy := args[0], args[1]
	self, _ := os.Executable()
	var rep nsReport
	rep.HostGroups, _ = syscall.Getgroups()
	cfg := Config{Path: self, Env: []string{"GORACE=atexit_sleep_ms=0"}}
	pidfile := filepath.Join(work, "pids")
	switch scenario {
	case "probe":
		cfg.Args = []string{nsProbeArg, setuidCopy}
		rep.HostSetuid = runEuid(setuidCopy)
	case "tree", "hostkill", "delegated":
		cfg.Args = []string{nsTreeArg, pidfile}
	case "inject":
		attemptHook = func(a attempt) error {
			if a.userns {
				return syscall.ENOSPC
			}
			return nil
		}
		cfg.Args = []string{nsTreeArg, pidfile}
	case "sysctl":
		// The test lowers user.max_user_namespaces between these two lines.
		fmt.Println("waiting")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return 7
		}
		cfg.Args = []string{helperArg, "block"}
	default:
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tree, err := Start(ctx, cfg)
	if err != nil {
		fmt.Println("error", err)
		return 6
	}
	sup := tree.Supervision()
	rep.Mechanism, rep.Supervision, rep.Dropped, rep.TreePid = sup.Mechanism.String(), sup.String(), sup.Dropped, tree.Pid()
	rep.CgroupPath = tree.cgroupPath()
	out := bufio.NewReader(tree.Stdout())
	switch scenario {
	case "probe":
		line, _ := out.ReadString('\n')
		rep.Probe = new(probeFacts)
		if err := json.Unmarshal([]byte(line), rep.Probe); err != nil {
			fmt.Println("error probe said", line)
			return 6
		}
	case "tree", "inject", "hostkill", "delegated":
		if line, _ := out.ReadString('\n'); line != "ready\n" {
			fmt.Println("error tree said", line)
			return 6
		}
	}
	if scenario == "hostkill" {
		b, _ := json.Marshal(rep)
		fmt.Println(string(b))
		for {
			testkit.BlockForever() // the test SIGKILLs this host
		}
	}
	start := time.Now()
	_ = tree.Stdin().Close()
	select {
	case <-tree.Exited():
	case <-time.After(time.Second):
	}
	_ = tree.Kill(ctx)
	vctx, vcancel := context.WithTimeout(ctx, 5*time.Second)
	defer vcancel()
	if err := tree.Verify(vctx); err != nil {
		rep.VerifyErr, rep.Unverified = err.Error(), errors.Is(err, ErrUnverified)
	}
	if err := tree.Close(); err != nil {
		rep.CloseErr = err.Error()
	}
	if rep.CgroupPath != "" {
		_, err := os.Stat(rep.CgroupPath)
		rep.CgroupGone = errors.Is(err, os.ErrNotExist)
	}
	rep.Elapsed = time.Since(start)
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return 0
}

// nobodyHost prepares a copy of the test binary that nobody may run, a set-uid copy
// owned by setuidUID, and a directory nobody may write; it returns the command running
// scenario as nobody (not started).
func nobodyHost(t *testing.T, scenario string) (cmd *exec.Cmd, work string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a host as nobody (an unprivileged run of this package covers the same paths)")
	}
	dir, exe := othersCopy(t)
	setuidCopy := filepath.Join(dir, "euid")
	copyFile(t, mustExecutable(), setuidCopy, 0o755)
	if err := os.Chown(setuidCopy, setuidUID, setuidUID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(setuidCopy, 0o755|os.ModeSetuid); err != nil { // after chown, which clears set-uid
		t.Fatal(err)
	}
	work = filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(exe, nsHostArg, scenario, work, setuidCopy)
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + work}
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{nobodyUID, extraGroup}},
	}
	t.Cleanup(func() {
		pids, _ := readPidFile(filepath.Join(work, "pids"))
		killLater(pids)()
	})
	return cmd, work
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// runNobody runs scenario to its end and returns its report.
func runNobody(t *testing.T, scenario string) (nsReport, string) {
	t.Helper()
	cmd, work := nobodyHost(t, scenario)
	return nobodyReport[nsReport](t, cmd), work
}

// nobodyReport runs a helper host (as nobody, or another user cmd names) to its end
// and returns the JSON report it printed.
func nobodyReport[R any](t *testing.T, cmd *exec.Cmd) R {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("host as nobody: %v: %s; stderr: %s", err, out, stderr.String())
	}
	var rep R
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("host said %q: %v", out, err)
	}
	return rep
}

// requireUserNS skips when this kernel does not let nobody create a user namespace.
func requireUserNS(t *testing.T, rep nsReport) {
	t.Helper()
	if !strings.Contains(rep.Mechanism, "userns") {
		t.Skipf("no user namespace for an unprivileged host here: %s", rep.Supervision)
	}
}

// An unprivileged host gets a PID namespace inside a user namespace with an
// identity mapping. Inside, the adapter is process 1, keeps its uid and gid, sees
// unmapped groups as 65534, cannot setgroups, holds no capabilities, and runs a set-uid
// program without gaining its owner's id; /proc is the host's.
func TestUserNamespaceAsNobody(t *testing.T) {
	rep, _ := runNobody(t, "probe")
	t.Logf("supervision as nobody: %s", rep.Supervision)
	requireUserNS(t, rep)
	if rep.Mechanism != "userns|pidns|pgroup|pdeathsig" {
		t.Fatalf("mechanism %s, want userns|pidns|pgroup|pdeathsig", rep.Mechanism)
	}
	if len(rep.Dropped) != 1 || rep.Dropped[0].Mechanism != MechCgroup || !strings.Contains(rep.Dropped[0].Reason, "not writable by uid 65534") {
		t.Fatalf("dropped %+v, want the cgroup, not writable by nobody", rep.Dropped)
	}
	p := rep.Probe
	if p.Pid != 1 || p.Ppid != 0 {
		t.Errorf("inside: getpid %d getppid %d, want 1 and 0", p.Pid, p.Ppid)
	}
	if p.UID != nobodyUID || p.EUID != nobodyUID || p.GID != nobodyUID {
		t.Errorf("inside: uid %d euid %d gid %d, want the host's %d", p.UID, p.EUID, p.GID, nobodyUID)
	}
	if p.ProcSelf != rep.TreePid || p.ProcSelf == 1 {
		t.Errorf("inside: /proc/self is %d, want the host pid %d", p.ProcSelf, rep.TreePid)
	}
	hostHasExtra := false
	for _, g := range rep.HostGroups {
		hostHasExtra = hostHasExtra || g == extraGroup
	}
	if !hostHasExtra {
		t.Fatalf("host groups %v lack %d: the test is not set up", rep.HostGroups, extraGroup)
	}
	for _, g := range p.Groups {
		if g != nobodyUID {
			t.Errorf("inside: groups %v, want every group shown as 65534", p.Groups)
		}
	}
	if !strings.Contains(p.SetgroupsErr, "not permitted") {
		t.Errorf("inside: setgroups said %q, want operation not permitted", p.SetgroupsErr)
	}
	if strings.Trim(p.CapEff, "0") != "" {
		t.Errorf("inside: CapEff %s, want none", p.CapEff)
	}
	if rep.HostSetuid != setuidUID {
		t.Fatalf("outside a user namespace the set-uid copy ran with euid %d, want %d: the test cannot show the difference", rep.HostSetuid, setuidUID)
	}
	if p.SetuidEUID != nobodyUID {
		t.Errorf("inside: the set-uid copy ran with euid %d, want %d (no id gained)", p.SetuidEUID, nobodyUID)
	}
	if rep.VerifyErr != "" || rep.CloseErr != "" {
		t.Errorf("verify %q close %q", rep.VerifyErr, rep.CloseErr)
	}
}

// R63, R64: as nobody, a tree with a grandchild in the group and a
// double-forked setsid daemon is killed and verified gone without a cgroup.
func TestUnprivilegedTreeVerified(t *testing.T) {
	rep, work := runNobody(t, "tree")
	requireUserNS(t, rep)
	pids, err := readPidFile(filepath.Join(work, "pids"))
	if err != nil || pids["adapter"] == 0 || pids["sleeper"] == 0 || pids["daemon"] == 0 {
		t.Fatalf("pid file %v, %v", pids, err)
	}
	if rep.VerifyErr != "" || rep.CloseErr != "" {
		t.Fatalf("as nobody under %s: verify %q, close %q", rep.Mechanism, rep.VerifyErr, rep.CloseErr)
	}
	for role, pid := range pids {
		if pidAlive(pid) {
			t.Errorf("%s (%d) still runs after a verified end", role, pid)
		}
	}
	t.Logf("%s: verified, %v from stdin close to closed", rep.Mechanism, rep.Elapsed)
}

// A host SIGKILLed as nobody leaves nothing: the parent-death signal reaches
// the namespace's init, and the kernel ends the rest.
func TestUnprivilegedHostSIGKILLed(t *testing.T) {
	cmd, work := nobodyHost(t, "hostkill")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	var rep nsReport
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("host said %q", line)
	}
	pids, _ := readPidFile(filepath.Join(work, "pids"))
	if !strings.Contains(rep.Mechanism, "userns") {
		killLater(pids)()
		t.Skipf("no user namespace here: %s", rep.Supervision)
	}
	for _, role := range []string{"adapter", "sleeper", "daemon"} {
		if !pidAlive(pids[role]) {
			t.Fatalf("%s not running before the kill: %v; host stderr: %s", role, pids, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	delete(pids, "middle") // exited by itself
	waitGone(t, pids)
}

// Where no user namespace can be had (here an injected ENOSPC, as
// with user.max_user_namespaces = 0), the start falls back to the process group, says
// which mechanisms were dropped and why, and Verify answers "unverified" without
// hanging.
func TestUserNamespaceRefusedFallback(t *testing.T) {
	rep, _ := runNobody(t, "inject")
	if rep.Mechanism != "pgroup|pdeathsig" {
		t.Fatalf("mechanism %s, want the process-group fallback", rep.Mechanism)
	}
	var ns *Dropped
	for i, d := range rep.Dropped {
		if d.Mechanism == MechUserNamespace|MechPidNamespace {
			ns = &rep.Dropped[i]
		}
	}
	if ns == nil || !strings.Contains(ns.Reason, "lacks CAP_SYS_ADMIN") || !strings.Contains(ns.Reason, "no space left on device") {
		t.Fatalf("dropped %+v, want userns|pidns with the clone error", rep.Dropped)
	}
	if !rep.Unverified {
		t.Fatalf("verify said %q, want unverified", rep.VerifyErr)
	}
	t.Logf("reported: %s; verify: %s (after %v)", rep.Supervision, rep.VerifyErr, rep.Elapsed)
}

// With the real sysctl: user.max_user_namespaces = 0 for the span of one
// Start (other tests on the machine may create user namespaces; the window is kept to
// that one start). The reason names the setting.
func TestUserNamespaceSysctlDisabled(t *testing.T) {
	const knob = "/proc/sys/user/max_user_namespaces"
	old, err := os.ReadFile(knob)
	if err != nil {
		t.Skipf("no %s: %v", knob, err)
	}
	// Tests of other packages that need user namespaces (e2e's unprivileged run) hold
	// this lock shared while they run; the window with the knob at 0 is exclusive.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "adapterkit-userns.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	cmd, _ := nobodyHost(t, "sysctl")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	if line, _ := out.ReadString('\n'); line != "waiting\n" {
		t.Fatalf("host said %q", line)
	}
	restore := func() {
		if err := os.WriteFile(knob, old, 0); err != nil {
			t.Errorf("restoring %s: %v", knob, err)
		}
	}
	if err := os.WriteFile(knob, []byte("0"), 0); err != nil {
		t.Skipf("cannot set %s: %v", knob, err)
	}
	_, werr := io.WriteString(in, "go\n")
	line, rerr := out.ReadString('\n')
	restore()
	if werr != nil || rerr != nil {
		t.Fatalf("host: %v %v", werr, rerr)
	}
	var rep nsReport
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("host said %q", line)
	}
	if rep.Mechanism != "pgroup|pdeathsig" || !strings.Contains(rep.Supervision, "user.max_user_namespaces = 0") {
		t.Fatalf("with user namespaces disabled: %s", rep.Supervision)
	}
	t.Logf("reported: %s", rep.Supervision)
}

// A host whose own cgroup v2 is delegated to its uid (here: a cgroup root
// creates and chowns to nobody, the way systemd's Delegate=yes does) creates the
// per-adapter cgroups there, unprivileged: kill and proof of emptiness by cgroup.
func TestDelegatedCgroupAsNobody(t *testing.T) {
	parent := requireCgroup(t)
	cmd, work := nobodyHost(t, "delegated")
	deleg := filepath.Join(parent, fmt.Sprintf("akdelegated-%d", os.Getpid()))
	if err := os.Mkdir(deleg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = (&cgroup{path: deleg}).remove() })
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(deleg, f), nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	dirf, err := (&cgroup{path: deleg}).openDir()
	if err != nil {
		t.Fatal(err)
	}
	defer dirf.Close()
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(dirf.Fd())
	rep := nobodyReport[nsReport](t, cmd)
	t.Logf("in a delegated cgroup as nobody: %s", rep.Supervision)
	if !strings.HasPrefix(rep.Mechanism, "cgroup|") {
		t.Fatalf("mechanism %s, want a cgroup", rep.Mechanism)
	}
	if filepath.Dir(rep.CgroupPath) != deleg {
		t.Fatalf("adapter cgroup %s, want one under the delegated %s", rep.CgroupPath, deleg)
	}
	if rep.VerifyErr != "" || rep.CloseErr != "" || !rep.CgroupGone {
		t.Fatalf("verify %q close %q, cgroup removed %v", rep.VerifyErr, rep.CloseErr, rep.CgroupGone)
	}
	pids, _ := readPidFile(filepath.Join(work, "pids"))
	delete(pids, "middle")
	waitGone(t, pids)
}
