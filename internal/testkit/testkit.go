// Package testkit holds what adapterkit's tests share: building the example adapters
// into a directory under the discovery naming convention, and checking from outside
// (/proc on Linux) that processes are gone. It is internal: no public API depends on
// it, and nothing outside tests imports it.
//
// It is in the module's shared floor (internal/layers): it imports only the standard
// library and other shared packages, so the tests of any package may use it. Test
// programs that need a higher layer (the upgrade tests' adapter, built on plugin) live
// with the other test programs under e2e/cmd.
package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Build is one program to build: a package (an import path, or a directory relative to
// the test's working directory) installed under Name (".exe" is added on Windows).
type Build struct {
	Pkg  string
	Name string
}

// The example adapters, under the names `make adapters` gives them.
var (
	Echo        = Build{"github.com/adapterkit/adapterkit/examples/echo", "echo_v1.2.0"}
	Thermometer = Build{"github.com/adapterkit/adapterkit/examples/thermometer", "thermometer_v1.0.0"}
	Console     = Build{"github.com/adapterkit/adapterkit/examples/console", "console_v1.0.0"}
	Blobs       = Build{"github.com/adapterkit/adapterkit/examples/blobs", "blobs_v1.0.0"}
	// Versioned is the upgrade tests' adapter (e2e/cmd/versioned), built under
	// a name discovery does not take: tests install it as NAME_vVERSION themselves.
	Versioned = Build{"github.com/adapterkit/adapterkit/e2e/cmd/versioned", "versioned"}
)

// ErrNoGo is returned when the go tool is not on PATH (go test puts its own first).
var ErrNoGo = errors.New("testkit: building adapters needs the go tool on PATH")

// PrebuiltEnv names a directory of programs built beforehand, under their Build names
// (".exe" added on Windows): BuildInto copies them from there instead of building.
// `make test-windows` sets it, since a test binary run under Wine has no go tool.
const PrebuiltEnv = "ADAPTERKIT_TEST_PREBUILT"

// BuildInto builds each program into dir and returns their paths by Name (or copies
// them from $ADAPTERKIT_TEST_PREBUILT).
func BuildInto(dir string, builds ...Build) (map[string]string, error) {
	if pre := os.Getenv(PrebuiltEnv); pre != "" {
		return copyPrebuilt(pre, dir, builds)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	paths := make(map[string]string, len(builds))
	for _, b := range builds {
		name := exeName(b.Name)
		out := filepath.Join(dir, name)
		cmd := exec.Command(goTool, "build", "-o", out, b.Pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("testkit: go build %s: %v\n%s", name, err, b)
		}
		paths[b.Name] = out
	}
	return paths, nil
}

func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

func copyPrebuilt(from, dir string, builds []Build) (map[string]string, error) {
	paths := make(map[string]string, len(builds))
	for _, b := range builds {
		name := exeName(b.Name)
		data, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			return nil, fmt.Errorf("testkit: %s=%s: %w", PrebuiltEnv, from, err)
		}
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, data, 0o755); err != nil {
			return nil, err
		}
		paths[b.Name] = out
	}
	return paths, nil
}

// BuildT builds the programs into a fresh temporary directory of t and returns it;
// without the go tool the test is skipped.
func BuildT(t testing.TB, builds ...Build) string {
	t.Helper()
	dir := TempDir(t)
	if _, err := BuildInto(dir, builds...); err != nil {
		if errors.Is(err, ErrNoGo) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return dir
}

// Runner is what a TestMain runs (a *testing.M, or goleak's wrapper of one).
type Runner interface{ Run() int }

// Main builds the programs into a temporary directory, stores its path in *dir, runs
// the tests through run (e.g. func(m) { goleak.VerifyTestMain(m) }), removes the
// directory and exits with the tests' status. Building failures panic: there is
// nothing to test without the adapters.
func Main(m *testing.M, dir *string, run func(Runner), builds ...Build) {
	d, err := os.MkdirTemp("", "adapterkit-test-")
	if err != nil {
		panic(err)
	}
	*dir = d
	if _, err := BuildInto(d, builds...); err != nil {
		_ = removeAll(d)
		panic(err)
	}
	code := 0
	func() {
		defer func() { _ = removeAll(d) }()
		run(exitCatcher{&code, m})
	}()
	os.Exit(code)
}

// exitCatcher records the status of the run so Main can clean up before exiting.
type exitCatcher struct {
	code *int
	m    *testing.M
}

func (e exitCatcher) Run() int { *e.code = e.m.Run(); return *e.code }

// WaitGone waits until none of pids is running (see Running), polling up to timeout,
// and fails t naming the survivors otherwise.
func WaitGone(t testing.TB, timeout time.Duration, pids ...int) {
	t.Helper()
	var left []int
	if !Within(timeout, func() bool {
		left = left[:0]
		for _, p := range pids {
			if Running(p) {
				left = append(left, p)
			}
		}
		return len(left) == 0
	}) {
		t.Fatalf("processes still running after %v: %v", timeout, left)
	}
}

// Gone fails t naming those of pids that are running now (see Running), without
// waiting: after a cleanup reported verified, nothing of the tree may still run, so a
// grace period would let a cleanup that returned too early pass.
func Gone(t testing.TB, pids ...int) {
	t.Helper()
	var left []int
	for _, p := range pids {
		if Running(p) {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Fatalf("still running when the cleanup reported them verified gone: %v", left)
	}
}

// Buffer is a bytes.Buffer that one goroutine may write while another reads it (an
// adapter's stderr, a logger's output); the zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Len returns how many bytes were written so far.
func (l *Buffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Deps returns the import paths of every package the named packages of this module
// depend on, themselves included (go list -deps); the test is skipped without a go
// tool.
func Deps(t testing.TB, pkgs ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	args := []string{"list", "-deps"}
	for _, p := range pkgs {
		args = append(args, "github.com/adapterkit/adapterkit/"+p)
	}
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}
