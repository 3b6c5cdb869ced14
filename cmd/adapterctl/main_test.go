package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Built once by TestMain:
//
//	goodDir: echo_v1.2.0 and thermometer_v1.0.0 (examples/echo, examples/thermometer)
//	badDir:  garbage_v1.0.0, noexit_v1.0.0, crash_v1.0.0, leaky_v1.0.0, fragile_v1.0.0,
//	         panicky_v1.0.0 (testdata/badadapter)
var goodDir, badDir string

// exe is the executable file name of NAME_vVERSION on this OS.
func exe(base string) string {
	if goruntime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}

// asAdapterctl, set in a child's environment, makes the test binary run as
// adapterctl with its arguments (a daemon process a test can kill).
const asAdapterctl = "ADAPTERCTL_TEST_AS_ADAPTERCTL"

func TestMain(m *testing.M) {
	if os.Getenv(asAdapterctl) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	root, err := os.MkdirTemp("", "adapterctl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := buildAdapters(root); err != nil {
		fmt.Fprintln(os.Stderr, "building the test adapters:", err)
		os.RemoveAll(root)
		os.Exit(1)
	}
	// Every test runs with an empty search path unless it sets one.
	os.Unsetenv(pathEnv)
	// serve, run in-process, would take a service manager's variables meant for this
	// test binary (and tell that manager it is ready): the tests that want them set
	// their own.
	for _, k := range []string{"NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		os.Unsetenv(k)
	}
	// serve keeps its record of refused adapter files in the test's own directory,
	// never in the machine's default (/var/lib/adapterkit for root).
	os.Setenv("STATE_DIRECTORY", filepath.Join(root, "state"))
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(root) }))
}

func buildAdapters(root string) error {
	goodDir, badDir = filepath.Join(root, "good"), filepath.Join(root, "bad")
	for _, d := range []string{goodDir, badDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	// The go tool of the toolchain running the tests, so the adapters match it.
	//lint:ignore SA1019 this test binary runs on the machine that built it
	goTool := filepath.Join(goruntime.GOROOT(), "bin", "go")
	builds := []struct{ out, pkg string }{
		{filepath.Join(goodDir, exe("echo_v1.2.0")), "../../examples/echo"},
		{filepath.Join(goodDir, exe("thermometer_v1.0.0")), "../../examples/thermometer"},
		{filepath.Join(badDir, exe("garbage_v1.0.0")), "./testdata/badadapter"},
	}
	for _, b := range builds {
		cmd := exec.Command(goTool, "build", "-o", b.out, b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	src, err := os.ReadFile(filepath.Join(badDir, exe("garbage_v1.0.0")))
	if err != nil {
		return err
	}
	for _, name := range []string{"noexit", "crash", "leaky", "fragile", "panicky"} {
		if err := os.WriteFile(filepath.Join(badDir, exe(name+"_v1.0.0")), src, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// result is what one run of adapterctl produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs adapterctl in-process with the given stdin.
func runCmd(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// want checks the exit status and that stdout and stderr contain the given strings.
func (r result) want(t *testing.T, code int, inStdout, inStderr []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range inStdout {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout does not contain %q:\n%s", s, r.stdout)
		}
	}
	for _, s := range inStderr {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not contain %q:\n%s", s, r.stderr)
		}
	}
}

func good(name string) string { return filepath.Join(goodDir, exe(name)) }
func bad(name string) string  { return filepath.Join(badDir, exe(name)) }

// writeFile creates a file with the given mode in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // the umask may have removed bits
		t.Fatal(err)
	}
	return p
}
