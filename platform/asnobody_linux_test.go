package platform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// asNobodyEnv names the test whose body a copy of the test binary runs as an ordinary
// user (rootAndNobody).
const asNobodyEnv = "ADAPTERKIT_PLATFORM_AS_NOBODY"

// nobodyRun says how rootAndNobody runs the nobody half.
type nobodyRun struct {
	// delegated starts the unprivileged run in a cgroup v2 of its own, under this
	// test's cgroup, chowned to its user the way systemd's Delegate=yes does: its
	// adapters get cgroups made by an ordinary user.
	delegated bool
	// uid, when not 0, runs it as this uid (and gid) instead of nobody's: an ordinary
	// user of the test's own, whose task and inotify counts no other program on the
	// machine shares. The subtest is then named "ownuid".
	uid int
}

// user is the uid the unprivileged half runs as, and its subtest's name (the same in
// the inner run, which may compute another uid).
func (how nobodyRun) user() (uid int, name string) {
	if how.uid != 0 {
		return how.uid, "ownuid"
	}
	return nobodyUID, "nobody"
}

// rootAndNobody runs body as a subtest named after this process's user ("root", or
// "euidN"), and, when that is root, again as the subtest "nobody" (or "ownuid", see
// nobodyRun.uid): a copy of the test binary, in a directory that user may read, runs
// only that subtest as that user (no supplementary groups, TMPDIR a directory of its
// own), and its verdict (pass, skip with its reason, or failure with its output) is
// this subtest's. Only a top-level test may call it, once.
func rootAndNobody(t *testing.T, how nobodyRun, body func(t *testing.T)) {
	t.Helper()
	_, name := how.user()
	if os.Getenv(asNobodyEnv) == t.Name() {
		t.Run(name, body) // the inner run, as the ordinary user
		return
	}
	user := "root"
	if os.Geteuid() != 0 {
		user = fmt.Sprintf("euid%d", os.Geteuid())
	}
	t.Run(user, body)
	t.Run(name, func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to run a test as another user")
		}
		runTestAsNobody(t, how)
	})
}

// othersCopy makes a directory that every user may read (not t.TempDir: its parent is
// private to root), which the test's cleanup removes, and copies the test binary into
// it for another user to run; it returns the directory and the copy.
func othersCopy(t *testing.T) (dir, exe string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "adapterkit-"+strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "platform.test")
	copyFile(t, mustExecutable(), exe, 0o755)
	return dir, exe
}

// workOf makes dir/work, owned by uid, with the given mode: a directory of that user's own.
func workOf(t *testing.T, dir string, uid int, mode os.FileMode) string {
	t.Helper()
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, mode); err != nil || os.Chmod(work, mode) != nil || os.Chown(work, uid, uid) != nil {
		t.Fatal("preparing the work directory")
	}
	return work
}

var logLine = regexp.MustCompile(`(?m)^\s+\S+\.go:\d+: (.*)$`)

// runTestAsNobody runs the parent test's unprivileged subtest in a copy of the test
// binary as its user; t is that subtest.
func runTestAsNobody(t *testing.T, how nobodyRun) {
	top, _, _ := strings.Cut(t.Name(), "/")
	uid, name := how.user()
	dir, exe := othersCopy(t)
	work := workOf(t, dir, uid, 0o700)
	ctx, cancel := context.WithTimeout(context.Background(), 6*bound) // a bound against a hang, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^"+regexp.QuoteMeta(top)+"$/^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + work, "PATH=" + os.Getenv("PATH"), asNobodyEnv + "=" + top}
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	if how.delegated {
		deleg := delegateCgroup(t, uid)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(deleg.Fd())
	}
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+top+"/"+name+" "):
		t.Logf("as %s:\n%s", name, verdicts(out))
	case err == nil && strings.Contains(string(out), "--- SKIP: "+top+"/"+name+" "):
		why := "(no reason given)"
		_, after, _ := strings.Cut(string(out), "=== RUN   "+top+"/"+name+"\n")
		if m := logLine.FindStringSubmatch(after); m != nil {
			why = m[1]
		}
		t.Skipf("as %s: %s", name, why)
	default:
		t.Fatalf("as %s: %v\n%s", name, err, out)
	}
}

// delegateCgroup makes a cgroup v2 under this test's own, owned by uid (the
// directory and the files systemd's Delegate=yes hands over), and returns it open for
// clone's CLONE_INTO_CGROUP; the test's cleanup kills what is left in it and removes it.
func delegateCgroup(t *testing.T, uid int) *os.File {
	t.Helper()
	parent := requireCgroup(t)
	cg := &cgroup{path: filepath.Join(parent, fmt.Sprintf("akasnobody-%d", os.Getpid()))}
	if err := os.Mkdir(cg.path, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		_ = cg.kill()
		_ = cg.waitEmpty(ctx)
		_ = cg.remove()
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(cg.path, f), uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	f, err := cg.openDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// verdicts are the "--- PASS/SKIP/FAIL" lines of a verbose test run's output.
func verdicts(out []byte) string {
	var b strings.Builder
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "--- ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
