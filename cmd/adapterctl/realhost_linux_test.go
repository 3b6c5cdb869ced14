package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobodyID is the uid and gid of nobody (and nogroup) on Linux.
const nobodyID = 65534

// realHost is a user the real adapterctl binary runs as: root (the test's own user) or
// nobody, each either as it is or in a user namespace of its own in which it may create
// no further user namespace (a host without user namespaces, as in many containers).
// There root still creates PID namespaces (it holds CAP_SYS_ADMIN there) and cgroups;
// nobody gets neither, and its adapters get the process-group fallback.
type realHost struct {
	name     string
	uid      int
	noUserns bool
}

// pidns reports whether adapters of h get a PID namespace.
func (h realHost) pidns() bool { return !h.noUserns || h.uid == 0 }

// realHosts are the users of the tests that run the real binary; all but the first
// need the test to run as root.
var realHosts = []realHost{{"root", 0, false}, {"root-no-userns", 0, true}, {"nobody", nobodyID, false}, {"nobody-no-userns", nobodyID, true}}

// realWork is one host's directory for a test: the adapterctl binary, adapters, a
// temporary and a state directory, all the host's user may use.
type realWork struct {
	host     realHost
	bin      string // the adapterctl binary
	dir      string // owned by the host's user, mode 0755
	adapters string // dir/adapters: daemonizer_v1.0.0 and echo_v1.2.0
	tmp      string // $TMPDIR

	// cgroup, when set, is the cgroup v2 directory adapterctl starts in
	// (CLONE_INTO_CGROUP); see delegateCgroup.
	cgroup *os.File
}

// realBinary builds adapterctl into a fresh directory everyone may read.
func realBinary(t *testing.T) string {
	t.Helper()
	dir := shortDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return adapterctlBin(t, dir)
}

// work prepares h's directory under a fresh one, skipping an unprivileged host when the
// test does not run as root.
func (h realHost) work(t *testing.T, bin string) *realWork {
	t.Helper()
	if h.uid == 0 && !h.noUserns {
		h.uid = os.Geteuid() // the test's own user
	} else {
		if os.Geteuid() != 0 {
			t.Skip("needs root to run adapterctl as nobody")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("no setpriv")
		}
	}
	dir := shortDir(t)
	w := &realWork{host: h, bin: bin, dir: dir, adapters: filepath.Join(dir, "adapters"), tmp: filepath.Join(dir, "tmp")}
	if err := os.Mkdir(w.adapters, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(w.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	copyExec(t, bad("garbage_v1.0.0"), filepath.Join(w.adapters, "daemonizer_v1.0.0"))
	copyExec(t, good("echo_v1.2.0"), filepath.Join(w.adapters, "echo_v1.2.0"))
	w.chownAll(t, dir)
	return w
}

// chownAll gives path and everything beneath it to the host's user.
func (w *realWork) chownAll(t *testing.T, path string) {
	t.Helper()
	if w.host.uid == os.Geteuid() {
		return
	}
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, w.host.uid, w.host.uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyExec copies the executable src to dst, mode 0755.
func copyExec(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(dst), filepath.Base(dst), string(b), 0o755)
}

// command is adapterctl with args, run as the host's user.
func (w *realWork) command(ctx context.Context, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	switch {
	case w.host.noUserns:
		// A user namespace of its own in which root and the host's user are themselves:
		// its root limits the user namespaces beneath it to none, then runs adapterctl,
		// as root with its capabilities in that namespace, or as the host's user without
		// any. So adapterctl can create no user namespace, and sees the system's files
		// owned by root as they are.
		const script = `echo 0 > /proc/sys/user/max_user_namespaces || exit 125; [ "$0" = 0 ] && exec "$@"; ` + // 125: noUsernsRefused
			`exec setpriv --reuid="$0" --regid="$0" --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"`
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, strconv.Itoa(w.host.uid), w.bin}, args...)...)
		ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
		if w.host.uid != 0 {
			ids = append(ids, syscall.SysProcIDMap{ContainerID: w.host.uid, HostID: w.host.uid, Size: 1})
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true,
			Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		}
	case w.host.uid != os.Geteuid():
		cmd = exec.CommandContext(ctx, "setpriv", append([]string{"--reuid=" + strconv.Itoa(w.host.uid),
			"--regid=" + strconv.Itoa(w.host.uid), "--clear-groups", "--", w.bin}, args...)...)
	default:
		cmd = exec.CommandContext(ctx, w.bin, args...)
	}
	if w.cgroup != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(w.cgroup.Fd())
	}
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "TMPDIR="+w.tmp, "HOME="+w.tmp, "STATE_DIRECTORY="+filepath.Join(w.dir, "state"))
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// run runs adapterctl with args as the host's user, bounded by two minutes.
func (w *realWork) run(t *testing.T, args ...string) result {
	t.Helper()
	return w.runFor(t, 2*time.Minute, args...)
}

// runFor is run bounded by d: a command that should end at once but runs on (a serve
// that accepted what it should refuse) is killed when d has passed.
func (w *realWork) runFor(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := w.command(ctx, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		if ctx.Err() == nil {
			t.Fatalf("adapterctl %v as %s: %v\n%s", args, w.host.name, err, errOut.String())
		}
		errOut.WriteString("(still running after " + d.String() + ": killed)\n")
	}
	if w.host.noUserns && code == noUsernsRefused {
		t.Skipf("a user namespace limited to none could not be made here: %s", errOut.String())
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// noUsernsRefused is the exit status of a noUserns host's command when the limit on user
// namespaces could not be written.
const noUsernsRefused = 125

// realDaemon is adapterctl serve running as a host's user.
type realDaemon struct {
	cmd     *exec.Cmd
	sock    string
	stderr  *strings.Builder
	rest    chan string // what it printed after the ready line, once it exited
	exited  chan error
	stopped bool // stop was called: cmd.ProcessState may be read
}

// serve starts adapterctl serve with args (the socket is added) and waits for its ready
// line; it is stopped at the end of the test if stop was not called.
func (w *realWork) serve(t *testing.T, args ...string) *realDaemon {
	t.Helper()
	d := &realDaemon{sock: filepath.Join(w.dir, "ctl.sock"), stderr: new(strings.Builder),
		rest: make(chan string, 1), exited: make(chan error, 1)}
	d.cmd = w.command(context.Background(), append([]string{"serve", "--socket", d.sock}, args...)...)
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		ready <- line
		b, _ := io.ReadAll(br)
		d.rest <- string(b)
		d.exited <- d.cmd.Wait()
	}()
	t.Cleanup(func() { _, _ = d.stop(t) })
	select {
	case line := <-ready:
		if !strings.Contains(line, "serving") {
			_, _ = d.stop(t)
			if w.host.noUserns && d.cmd.ProcessState.ExitCode() == noUsernsRefused {
				t.Skipf("a user namespace limited to none could not be made here: %s", d.stderr.String())
			}
			t.Fatalf("serve as %s: ready line %q\n%s", w.host.name, line, d.stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_, _ = d.stop(t)
		t.Fatalf("serve as %s did not get ready\n%s", w.host.name, d.stderr.String())
	}
	return d
}

// stop sends SIGTERM and waits for the daemon to exit; it returns what the daemon
// printed after its ready line, and Wait's error (an exit status). Calling it again
// returns "" and nil.
func (d *realDaemon) stop(t *testing.T) (string, error) {
	t.Helper()
	if d.stopped {
		return "", nil
	}
	d.stopped = true
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-d.exited:
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		err = <-d.exited
		t.Errorf("serve did not stop within a minute of SIGTERM\n%s", d.stderr.String())
	}
	return <-d.rest, err
}

// tokenProcs returns the living processes whose command line holds "sleeper TOKEN": the
// daemons a daemonizer adapter left with that token.
func tokenProcs(t *testing.T, token string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), "\x00sleeper\x00"+token+"\x00") {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(st), ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// killTokenProcs kills what tokenProcs finds, at the end of a test that may have left
// a daemon behind.
func killTokenProcs(t *testing.T, token string) {
	t.Cleanup(func() {
		for _, pid := range tokenProcs(t, token) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}
