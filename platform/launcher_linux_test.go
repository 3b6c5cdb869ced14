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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/platform/internal/launch"
)

// launchTestArg in argv[1] runs one of this file's helper modes (argv[2]).
const launchTestArg = "adapterkit-launcher-test"

func init() {
	if len(os.Args) > 2 && os.Args[1] == launchTestArg {
		os.Exit(runLaunchTestHelper(os.Args[2], os.Args[3:]))
	}
}

func runLaunchTestHelper(mode string, args []string) int {
	switch mode {
	case "hostsignal": // args: host pid, "real" or "zero"; stdin: the host's thread ids
		return signalThreads(args[0], args[1] == "real")
	case "flip": // args: link, a, b: the attacker of TestSandboxShebangLinkRace
		return flipLink(args[0], args[1], args[2])
	case "shebangrace": // args: work, secret, starts, budget: a host as nobody runs the race
		return runShebangRace(args)
	case "status": // its privileges, asked of the kernel (a sandbox refuses /proc)
		fmt.Print(privileges())
	case "nobodyhost": // args: isolation; a host as nobody: signalHostThreads's report as JSON
		iso, _ := strconv.Atoi(args[0])
		got, sup, err := signalHostThreads(context.Background(), Config{Sandbox: &Sandbox{}, Isolation: Isolation(iso)}, true)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
		b, _ := json.Marshal(struct {
			Results     map[string]string
			Supervision string
		}{got, sup.String()})
		fmt.Println(string(b))
	default:
		return 2
	}
	return 0
}

// privileges describes the calling thread's privileges as "key value" lines: the
// capability sets as bit masks, no_new_privs, the seccomp mode and the uid.
func privileges() string {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var d [2]unix.CapUserData
	if err := unix.Capget(&hdr, &d[0]); err != nil {
		return "capget " + err.Error() + "\n"
	}
	var bnd, amb uint64
	for c := 0; c < 64; c++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && r == 1 {
			bnd |= 1 << c
		}
		if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && r == 1 {
			amb |= 1 << c
		}
	}
	nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	sc, _ := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return fmt.Sprintf("CapEff %x\nCapPrm %x\nCapInh %x\nCapBnd %x\nCapAmb %x\nNoNewPrivs %d\nSeccomp %d\nUid %d\n",
		uint64(d[1].Effective)<<32|uint64(d[0].Effective), uint64(d[1].Permitted)<<32|uint64(d[0].Permitted),
		uint64(d[1].Inheritable)<<32|uint64(d[0].Inheritable), bnd, amb, nnp, sc, os.Getuid())
}

// signalThreads tries to signal every thread of the host named on stdin: with signal 0
// first, and only where that is refused (real) with SIGSTOP and SIGKILL, so that the
// test without the fix sees "ok" instead of a killed host. One line per thread.
func signalThreads(hostPid string, real bool) int {
	pid, _ := strconv.Atoi(hostPid)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	for _, f := range strings.Fields(line) {
		tid, _ := strconv.Atoi(f)
		err := unix.Tgkill(pid, tid, 0)
		switch {
		case err == nil:
			fmt.Printf("%d ok\n", tid)
		case real:
			stop := unix.Tgkill(pid, tid, unix.SIGSTOP)
			kill := unix.Tgkill(pid, tid, unix.SIGKILL)
			fmt.Printf("%d err %v/%v/%v\n", tid, err, stop, kill)
		default:
			fmt.Printf("%d err %v\n", tid, err)
		}
	}
	return 0
}

// signalHostThreads starts the "hostsignal" helper with cfg, hands it the ids of every
// thread of this process as they are while it runs, and returns what it could do to
// each (thread id -> "ok" or "err ...").
func signalHostThreads(ctx context.Context, cfg Config, real bool) (map[string]string, Supervision, error) {
	mode := "zero"
	if real {
		mode = "real"
	}
	cfg.Path = mustExecutable()
	cfg.Args = []string{launchTestArg, "hostsignal", strconv.Itoa(os.Getpid()), mode}
	cfg.Env = []string{"GORACE=atexit_sleep_ms=0"}
	tree, err := Start(ctx, cfg)
	if err != nil {
		return nil, Supervision{}, err
	}
	defer func() {
		_ = tree.Kill(ctx)
		_ = tree.Verify(ctx)
		_ = tree.Close()
	}()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, Supervision{}, err
	}
	var tids []string
	for _, task := range tasks {
		tids = append(tids, task.Name())
	}
	if _, err := io.WriteString(tree.Stdin(), strings.Join(tids, " ")+"\n"); err != nil {
		return nil, Supervision{}, err
	}
	tree.Stdin().Close()
	out := map[string]string{}
	sc := bufio.NewScanner(tree.Stdout())
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		out[k] = v
	}
	if len(out) != len(tids) {
		return nil, Supervision{}, fmt.Errorf("the adapter reported %d of %d threads: %v", len(out), len(tids), out)
	}
	return out, tree.Supervision(), nil
}

// No thread of the host can be signalled by a sandboxed adapter, in or out of a PID
// namespace: the launcher stage gives the adapter a Landlock domain no host thread
// shares. Without the sandbox (the control) every thread can be signalled.
func TestSandboxCannotSignalHost(t *testing.T) {
	control, _, err := signalHostThreads(ctxBound(t), Config{Isolation: IsolationProcessGroup}, false)
	if err != nil {
		t.Fatal(err)
	}
	for tid, r := range control {
		if r != "ok" {
			t.Fatalf("control: thread %s: %s; the probe cannot show a refusal", tid, r)
		}
	}
	for _, is := range append(isolations[:len(isolations):len(isolations)], struct {
		name string
		iso  Isolation
	}{"no-userns", IsolationNoUserNamespace}) {
		t.Run(is.name, func(t *testing.T) {
			got, sup, err := signalHostThreads(ctxBound(t), Config{Sandbox: &Sandbox{}, Isolation: is.iso}, true)
			if err != nil {
				t.Fatal(err)
			}
			requireSignalScope(t, sup)
			for tid, r := range got {
				if !strings.HasPrefix(r, "err ") {
					t.Errorf("%s: the adapter could signal host thread %s: %s", sup, tid, r)
				}
			}
		})
	}
}

// requireSignalScope skips where Landlock cannot scope signals (before ABI 6).
func requireSignalScope(t *testing.T, sup Supervision) {
	t.Helper()
	if !strings.Contains(sup.Sandbox, "scope") {
		t.Skipf("no Landlock signal scope here: %s", sup)
	}
}

// The same as nobody, with a PID namespace in a user namespace, and on the paths a host
// without user namespaces takes (IsolationNoUserNamespace: no PID namespace then).
func TestSandboxCannotSignalHostAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a host as nobody")
	}
	dir, exe := othersCopy(t)
	work := workOf(t, dir, nobodyUID, 0o755)
	for _, is := range []struct {
		name string
		iso  Isolation
	}{{"auto", IsolationAuto}, {"no-userns", IsolationNoUserNamespace}, {"pgroup", IsolationProcessGroup}} {
		t.Run(is.name, func(t *testing.T) {
			cmd := exec.CommandContext(ctxBound(t), exe, launchTestArg, "nobodyhost", strconv.Itoa(int(is.iso)))
			cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + work}
			cmd.Dir = work
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
			rep := nobodyReport[struct {
				Results     map[string]string
				Supervision string
			}](t, cmd)
			if !strings.Contains(rep.Supervision, "scope") {
				t.Skipf("no Landlock signal scope here: %s", rep.Supervision)
			}
			if len(rep.Results) == 0 {
				t.Fatalf("no threads reported: %+v", rep)
			}
			for tid, r := range rep.Results {
				if !strings.HasPrefix(r, "err ") {
					t.Errorf("%s: the adapter could signal host thread %s: %s", rep.Supervision, tid, r)
				}
			}
			t.Logf("%s: %v", rep.Supervision, rep.Results)
		})
	}
}

// statusOf starts the "status" helper with cfg and returns what it printed.
func statusOf(t *testing.T, cfg Config) map[string]string {
	t.Helper()
	tree := startHelperArgs(t, cfg, launchTestArg, "status")
	out, err := io.ReadAll(tree.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		m[k] = v
	}
	return m
}

// startHelperArgs is startHelper with the whole argv after the executable.
func startHelperArgs(t *testing.T, cfg Config, args ...string) *Tree {
	t.Helper()
	cfg.Path, cfg.Args = mustExecutable(), args
	if cfg.Env == nil {
		cfg.Env = []string{"GORACE=atexit_sleep_ms=0"}
	}
	tree, err := Start(ctxBound(t), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { shutdown(t, tree) })
	return tree
}

// A sandboxed adapter of a root host holds no capability in any set, bounding and
// ambient included, whatever the namespaces; it runs with no_new_privs and a seccomp
// filter, and (in a user namespace too) with the host's own uid. The control, the same
// start without a sandbox, holds the host's capabilities.
func TestSandboxNoCapabilities(t *testing.T) {
	requireRoot(t)
	control := statusOf(t, Config{Isolation: IsolationProcessGroup})
	if strings.Trim(control["CapEff"], "0") == "" || strings.Trim(control["CapBnd"], "0") == "" {
		t.Fatalf("control: %v; the host holds no capability to drop", control)
	}
	euid := strconv.Itoa(os.Geteuid())
	for _, is := range append(isolations[:len(isolations):len(isolations)], struct {
		name string
		iso  Isolation
	}{"no-userns", IsolationNoUserNamespace}) {
		t.Run(is.name, func(t *testing.T) {
			st := statusOf(t, Config{Sandbox: &Sandbox{}, Isolation: is.iso})
			for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if v, ok := st[k]; !ok || strings.Trim(v, "0") != "" {
					t.Errorf("%s = %q, want none", k, v)
				}
			}
			if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" {
				t.Errorf("NoNewPrivs %q Seccomp %q, want 1 and 2", st["NoNewPrivs"], st["Seccomp"])
			}
			if f := strings.Fields(st["Uid"]); len(f) == 0 || f[0] != euid {
				t.Errorf("Uid %q, want the host's %s", st["Uid"], euid)
			}
		})
	}
}

// A "#!" line cannot choose its own grants: "#!/usr/bin/env /some/home/bin/x" names a
// program no system installed, so the start is refused, naming it; granted by
// Sandbox.Exec it runs, but its installation prefix ("/some/home") stays unreadable
// and is not listed among the derived grants.
func TestSandboxShebangGrantsNothing(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	bin := filepath.Join(home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(home, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(bin, "x")
	body := fmt.Sprintf("#!/bin/sh\nexec %s %s probe read:%s\n", mustExecutable(), helperArg, secret)
	if err := os.WriteFile(x, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	adapter := filepath.Join(dir, "adapters", "adapter") // its directory is readable
	if err := os.Mkdir(filepath.Dir(adapter), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adapter, []byte("#!/usr/bin/env "+x+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Path: adapter, Env: []string{"GORACE=atexit_sleep_ms=0"}, Sandbox: &Sandbox{}, Isolation: IsolationProcessGroup}
	_, err := Start(ctxBound(t), cfg)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), x) || !strings.Contains(err.Error(), "Sandbox.Exec") {
		t.Fatalf("Start: %v; want ErrInvalidConfig naming %s", err, x)
	}
	cfg.Sandbox = &Sandbox{Exec: []string{x, mustExecutable()}}
	tree, err := Start(ctxBound(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, tree)
	tree.Stdin().Close()
	out, _ := io.ReadAll(tree.Stdout())
	if !strings.Contains(string(out), "read:"+secret+" err") {
		t.Errorf("probe said %q; want the read of %s refused", out, secret)
	}
	for _, d := range tree.Supervision().Derived {
		if strings.Contains(d, home) {
			t.Errorf("derived grant %q names the #! line's directory", d)
		}
	}
}

// A step of the launcher that fails reaches Start as a *SandboxError naming it, with
// the kernel's errno (here: the adapter is no executable format at all).
func TestSandboxLauncherError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(path, []byte("\x00\x01 not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, iso := range []Isolation{IsolationAuto, IsolationProcessGroup} { // the latter through a reaper
		_, err := Start(ctxBound(t), Config{Path: path, Sandbox: &Sandbox{}, Isolation: iso})
		var se *SandboxError
		if !errors.As(err, &se) || se.Step != "executing the adapter" || !errors.Is(err, syscall.ENOEXEC) || !errors.Is(err, ErrStart) {
			t.Fatalf("isolation %d: Start: %v; want a *SandboxError for the exec, matching ENOEXEC and ErrStart", iso, err)
		}
	}
}

// The launcher hands the adapter 0, 1 and 2 only: its specification, the ruleset and
// the status pipe are closed, as is a descriptor the host left without close-on-exec.
// The host reads the adapter's descriptors from outside (the sandbox refuses /proc).
func TestSandboxNoDescriptorLeaks(t *testing.T) {
	planted, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // no O_CLOEXEC on purpose
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(planted)
	for _, iso := range []Isolation{IsolationAuto, IsolationProcessGroup} { // the latter below a reaper
		tree := startHelper(t, Config{Sandbox: &Sandbox{}, Isolation: iso}, "echo")
		// One line through the helper: it runs its main, past the launcher stage and its
		// runtime's start.
		if _, err := io.WriteString(tree.Stdin(), "up\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(tree.Stdout(), make([]byte, 3)); err != nil {
			t.Fatal(err)
		}
		checkNoLeaks(t, tree.Pid())
	}
}

// checkNoLeaks checks that the process pid has no descriptors above 2 but its Go
// runtime's own, and has 0, 1 and 2.
func checkNoLeaks(t *testing.T, pid int) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, n := range names {
		target, err := os.Readlink(filepath.Join(dir, n.Name()))
		if errors.Is(err, os.ErrNotExist) {
			// Closed since the directory was read (the Go runtime reads its cgroup's
			// CPU limit now and then): not a leak, which stays open.
			continue
		}
		// The helper's own: its netpoller, and the cgroup CPU limit files its Go
		// runtime reads to size GOMAXPROCS.
		own := target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" ||
			strings.HasPrefix(filepath.Base(target), "cpu.") && strings.HasPrefix(target, "/sys/fs/cgroup/")
		if n, _ := strconv.Atoi(n.Name()); n > 2 && !own {
			t.Errorf("leaked descriptor %d -> %s", n, target)
		}
		fds = append(fds, n.Name())
	}
	for _, want := range []string{"0", "1", "2"} {
		if !slices.Contains(fds, want) {
			t.Errorf("descriptor %s missing in %v", want, fds)
		}
	}
}

// The launch specification decodes to what was encoded, and nothing else decodes.
func TestLaunchSpecRoundTrip(t *testing.T) {
	s := &launch.Spec{Path: "/a", Argv: []string{"/a", "x y", ""}, Env: []string{"A=1"},
		Filter: []unix.SockFilter{{Code: 1, Jt: 2, Jf: 3, K: 4}}, Rules: true, Script: true, Hold: true, Reaper: true}
	got, err := launch.Decode(launch.Encode(s))
	if err != nil || fmt.Sprint(*got) != fmt.Sprint(*s) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, s)
	}
	b := launch.Encode(s)
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(slices.Clone(b), 0), []byte("x" + string(b))} {
		if _, err := launch.Decode(bad); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
}

// FuzzDecodeLaunch: any bytes decode to a specification or an error, never a panic or
// an allocation a length field claims beyond the input.
func FuzzDecodeLaunch(f *testing.F) {
	f.Add(launch.Encode(&launch.Spec{Path: "/a", Argv: []string{"/a"}, Filter: []unix.SockFilter{{K: 1}}}))
	f.Add([]byte(launch.Magic + "\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := launch.Decode(b)
		if err == nil && !slices.Equal(launch.Encode(s), b) {
			t.Fatalf("%q decoded to %+v, which encodes differently", b, s)
		}
	})
}

// benchmarkStart starts, and ends, the "block" helper with cfg b.N times: the cost of a
// start as the host pays it, launcher stage included. child-cpu-ms/op is the CPU time
// of the adapter's process, the launcher's included (it is the same process), which
// a loaded machine does not inflate as it does the time per start.
func benchmarkStart(b *testing.B, cfg Config) {
	cfg.Path, cfg.Args, cfg.Env = mustExecutable(), []string{helperArg, "block"}, []string{"GORACE=atexit_sleep_ms=0"}
	ctx := context.Background()
	var cpu time.Duration
	defer func() { b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "child-cpu-ms/op") }()
	for b.Loop() {
		tree, err := Start(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		tree.Stdin().Close()
		<-tree.Exited()
		cpu += tree.ExitState().UserTime() + tree.ExitState().SystemTime()
		if err := tree.Verify(ctx); err != nil && treeProves(tree.Supervision()) {
			b.Fatal(err)
		}
		tree.Close()
	}
}

func BenchmarkStartUncontained(b *testing.B) { benchmarkStart(b, Config{}) }

func BenchmarkStartContained(b *testing.B) { benchmarkStart(b, Config{Sandbox: &Sandbox{}}) }

// BenchmarkStartContainedProcessGroup: a sandboxed start in process-group mode, where the
// launcher stays as the adapter's reaper (child-cpu-ms/op is then the reaper's CPU time,
// the adapter's included: the reaper reaps it).
func BenchmarkStartContainedProcessGroup(b *testing.B) {
	benchmarkStart(b, Config{Sandbox: &Sandbox{}, Isolation: IsolationProcessGroup})
}

// Resources.MaxProcesses holds exactly for a sandboxed adapter, however low: the
// launcher's threads get room of their own, and the limit is lowered before the
// adapter runs: the shell (which gives up at a refused fork) forks once under 2, twice
// under 3, never under 1.
func TestSandboxProcessLimitExact(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		cfg := Config{Path: "/bin/sh", Args: []string{"-c", "echo start; /bin/true && echo forked; /bin/true | /bin/true && echo piped"},
			Sandbox: &Sandbox{Exec: []string{canonical(t, "/bin/true")}}, Resources: Resources{MaxProcesses: n}}
		tree, err := Start(ctxBound(t), cfg)
		if err != nil {
			t.Fatalf("MaxProcesses %d: %v", n, err)
		}
		out, _ := io.ReadAll(tree.Stdout())
		shutdown(t, tree)
		if tree.LimitErr() != nil {
			t.Skipf("the process limit is not applied here: %v", tree.LimitErr())
		}
		want := map[int]string{1: "start\n", 2: "start\nforked\n", 3: "start\nforked\npiped\n"}[n]
		if string(out) != want {
			t.Errorf("MaxProcesses %d: the adapter said %q, want %q", n, out, want)
		}
	}
}

// installSeccomp restricts the calling thread only: a thread that installed the filter
// is refused what it refuses, while the other threads of the process are not.
func TestInstallSeccompThreadOnly(t *testing.T) {
	prog, _, err := seccompFilter(&Sandbox{})
	if err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the restricted thread ends with this goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		if err := installSeccomp(prog); err != nil {
			done <- err
			return
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		done <- err
	}()
	if err := <-done; !errors.Is(err, unix.EPERM) {
		t.Fatalf("the filtered thread's socket: %v, want EPERM", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatalf("another thread was filtered too: %v", err)
	}
	unix.Close(fd)
}
