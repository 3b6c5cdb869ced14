package platform

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// bound keeps a test from hanging; it is never a timing assertion.
const bound = 20 * time.Second

func ctxBound(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return ctx
}

// startHelper starts the test binary as an adapter in the given helper mode, and
// registers a cleanup that kills, waits for the direct child and closes.
func startHelper(t *testing.T, cfg Config, mode string, args ...string) *Tree {
	t.Helper()
	cfg.Path = mustExecutable()
	cfg.Args = append([]string{helperArg, mode}, args...)
	if cfg.Env == nil && mode != "env" {
		// The race runtime sleeps 1 s at exit by default; the environment test needs
		// its Env untouched, the others do not care.
		cfg.Env = []string{"GORACE=atexit_sleep_ms=0"}
	}
	tree, err := Start(ctxBound(t), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { shutdown(t, tree) })
	return tree
}

// shutdown ends a tree whatever the mechanism, and waits for the reaper goroutine.
func shutdown(t *testing.T, tree *Tree) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	_ = tree.Kill(ctx)
	if err := tree.Verify(ctx); err != nil && treeProves(tree.Supervision()) {
		t.Errorf("Verify: %v", err)
	}
	select {
	case <-tree.Exited():
	case <-ctx.Done():
		t.Errorf("adapter %d not reaped", tree.Pid())
	}
	_ = tree.Close()
}

// treeProves reports whether Verify can succeed for a tree supervised as s: a process
// group alone cannot, nor a cgroup the adapter could move processes out of.
func treeProves(s Supervision) bool {
	m := s.Mechanism
	return (m.Has(MechCgroup) || m.Has(MechPidNamespace) || m.Has(MechJobObject) || m.Has(MechReaper)) && s.NoProof == ""
}

// R61, A31, R62: launch rules refuse bad paths with typed causes.
func TestLaunchRules(t *testing.T) {
	dir := testkit.TempDir(t)
	plain := filepath.Join(dir, "plain.exe")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		dir  string
		want error
	}{
		{"relative", "adapter.exe", "", ErrNotAbsolute},
		{"dot relative", filepath.Join(".", "bin", "adapter.exe"), "", ErrNotAbsolute},
		{"empty", "", "", ErrNotAbsolute},
		{"missing", filepath.Join(dir, "missing.exe"), "", ErrNotFound},
		{"directory", dir, "", ErrNotRegular},
		{"relative dir", mustExecutable(), "rel", ErrInvalidConfig},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases, struct {
			name string
			path string
			dir  string
			want error
		}{"not executable", plain, "", ErrNotExecutable})
	}
	if runtime.GOOS == "windows" {
		cases[4].want = errNotExe // a directory has no .exe name
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := Start(context.Background(), Config{Path: tc.path, Dir: tc.dir})
			if err == nil {
				_ = tree.Kill(context.Background())
				<-tree.Exited()
				tree.Close()
				t.Fatal("Start succeeded")
			}
			var le *LaunchError
			if !errors.As(err, &le) || le.Path != tc.path {
				t.Fatalf("error %v (%T) is not a *LaunchError for %q", err, err, tc.path)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v is not %v", err, tc.want)
			}
		})
	}
}

// R62: only an explicit .exe, no look-alikes Windows would normalise.
func TestWindowsExeName(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{`C:\adapters\a.exe`, true},
		{`C:\adapters\A.EXE`, true},
		{`\\server\share\a.exe`, true},
		{`C:\adapters\a.bat`, false},
		{`C:\adapters\a.cmd`, false},
		{`C:\adapters\a.com`, false},
		{`C:\adapters\a.lnk`, false},
		{`C:\adapters\a`, false},
		{`C:\adapters\.exe`, false},
		{`C:\adapters\a.exe.`, false},
		{`C:\adapters\a.exe `, false},
		{`C:\adapters\a.exe:stream`, false},
		{`C:\adapters\a.exe::$DATA`, false},
		{`\\?\C:\adapters\a.exe`, false},
		{`\\.\C:\adapters\a.exe`, false},
		{`C:\adapters.exe\a.bat`, false},
	}
	for _, tc := range cases {
		err := checkWindowsExeName(tc.path)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errNotExe)) {
			t.Errorf("checkWindowsExeName(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

func TestStartCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, Config{Path: mustExecutable()})
	if !errors.Is(err, ErrStart) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want ErrStart and context.Canceled", err)
	}
}

// R7: the transport is the adapter's stdin and stdout.
func TestStdinStdoutPlumbing(t *testing.T) {
	tree := startHelper(t, Config{}, "echo")
	msg := []byte("hello over the pipes\n")
	if _, err := tree.Stdin().Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := tree.Stdin().Close(); err != nil { // disconnect: the helper exits on EOF
		t.Fatal(err)
	}
	got, err := io.ReadAll(tree.Stdout())
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read %q, %v; want %q", got, err, msg)
	}
	<-tree.Exited()
	if st := tree.ExitState(); st == nil || !st.Success() {
		t.Fatalf("exit state %v", st)
	}
	if err := tree.signal(os.Kill); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("Signal after exit: %v", err)
	}
}

// R8, A27: stderr is discarded by default and never blocks the adapter; a host may
// opt in to keep it.
func TestStderr(t *testing.T) {
	const n = 1 << 20 // far beyond a pipe buffer: would block if nobody drained it
	t.Run("discarded", func(t *testing.T) {
		tree := startHelper(t, Config{}, "stderr", "1048576")
		line, err := bufio.NewReader(tree.Stdout()).ReadString('\n')
		if err != nil || line != "done\n" {
			t.Fatalf("stdout %q, %v", line, err)
		}
	})
	t.Run("captured", func(t *testing.T) {
		var buf testkit.Buffer
		tree := startHelper(t, Config{Stderr: &buf}, "stderr", "1048576")
		line, err := bufio.NewReader(tree.Stdout()).ReadString('\n')
		if err != nil || line != "done\n" {
			t.Fatalf("stdout %q, %v", line, err)
		}
		tree.Stdin().Close()
		if err := tree.Verify(ctxBound(t)); err != nil {
			if treeProves(tree.Supervision()) || os.Geteuid() == 0 {
				t.Fatal(err) // as root the default isolation proves the end
			}
			t.Skipf("%s cannot prove the end, so Close drops what stderr still held: %v", tree.Supervision().Mechanism, err)
		}
		if err := tree.Close(); err != nil { // waits for the copy to end
			t.Fatal(err)
		}
		if buf.Len() != n {
			t.Fatalf("captured %d bytes of stderr, want %d", buf.Len(), n)
		}
	})
}

// The environment is exactly Config.Env; nil means empty; a name given twice reaches
// the adapter once, with the last value.
func TestEnvironmentIsExact(t *testing.T) {
	t.Setenv("ADAPTERKIT_HOST_SECRET", "must-not-leak")
	for _, tc := range []struct{ env, want []string }{
		{nil, nil},
		{[]string{"A=1", "B=two words", "EMPTY="}, []string{"A=1", "B=two words", "EMPTY="}},
		{[]string{"PATH=/usr/bin", "A=1", "PATH=/safe"}, []string{"PATH=/safe", "A=1"}},
	} {
		env := tc.want
		tree := startHelper(t, Config{Env: tc.env}, "env")
		got, err := io.ReadAll(tree.Stdout())
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		if len(got) > 0 {
			lines = strings.Split(string(got), "\n")
		}
		if runtime.GOOS == "windows" { // Windows adds a few per-drive variables such as =C:=C:\
			lines = slices.DeleteFunc(lines, func(s string) bool { return strings.HasPrefix(s, "=") })
		}
		if added := slices.DeleteFunc(slices.Clone(lines), func(s string) bool { return !wineAdded(s) }); len(added) > 0 &&
			testkit.WineGap(t, "the environment holds nothing but Config.Env",
				"Wine adds WINE*, SystemDrive and SystemRoot to every process's environment") {
			lines = slices.DeleteFunc(lines, func(s string) bool { return wineAdded(s) && !slices.Contains(env, s) })
		}
		if !slices.Equal(lines, env) && slices.Equal(slices.Sorted(slices.Values(lines)), slices.Sorted(slices.Values(env))) &&
			testkit.WineGap(t, "the environment keeps Config.Env's order", "Wine sorts the environment block by name") {
			continue
		}
		if !slices.Equal(lines, env) && !(len(lines) == 0 && len(env) == 0) {
			t.Errorf("environment %q, want exactly %q", lines, env)
		}
	}
}

func TestWorkingDirectory(t *testing.T) {
	dir := testkit.TempDir(t)
	for _, tc := range []struct{ dir, want string }{
		{"", filepath.Dir(mustExecutable())},
		{dir, dir},
	} {
		tree := startHelper(t, Config{Dir: tc.dir}, "cwd")
		got, err := io.ReadAll(tree.Stdout())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.EvalSymlinks(tc.want)
		if gotR, _ := filepath.EvalSymlinks(string(got)); gotR != want {
			t.Errorf("working directory %q, want %q", got, want)
		}
	}
}

func TestMechanismString(t *testing.T) {
	cases := map[Mechanism]string{
		0:                                "none",
		MechCgroup:                       "cgroup",
		MechCgroup | MechPidNamespace:    "cgroup|pidns",
		MechProcessGroup | MechJobObject: "pgroup|job",
		MechParentDeathSignal:            "pdeathsig",
	}
	for m, want := range cases {
		if m.String() != want {
			t.Errorf("%d.String() = %q, want %q", m, m.String(), want)
		}
	}
	if !(MechCgroup | MechPidNamespace).Has(MechCgroup) || MechCgroup.Has(MechPidNamespace) || MechCgroup.Has(0) {
		t.Error("Has is wrong")
	}
}

func TestErrorsMatch(t *testing.T) {
	var err error = &UnverifiedError{Mechanism: MechProcessGroup, Pids: []int{7}, Reason: "r"}
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "[7]") {
		t.Errorf("UnverifiedError: %v", err)
	}
	err = &LimitError{Limits: []string{"memory"}, Reason: "r"}
	if !errors.Is(err, ErrLimitUnsupported) {
		t.Errorf("LimitError: %v", err)
	}
}

// A path that is not an explicit .exe (Windows) is one case of ErrNotExecutable: a
// host checks one sentinel for "this file cannot be launched as an adapter".
func TestNotExeIsNotExecutable(t *testing.T) {
	if !errors.Is(errNotExe, ErrNotExecutable) {
		t.Fatalf("%v does not match ErrNotExecutable", errNotExe)
	}
}

// wineAdded reports whether an environment entry is one Wine adds to every process.
func wineAdded(entry string) bool {
	name, _, _ := strings.Cut(entry, "=")
	return strings.HasPrefix(name, "WINE") || name == "SystemDrive" || name == "SystemRoot"
}
