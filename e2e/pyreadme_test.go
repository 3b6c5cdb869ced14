package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The Python SDK's README starts a user from an empty directory: write hello.py, build
// it with tools/build_adapter.py, and check and call it with adapterctl, which starts it
// with an empty environment as a host does. This test runs exactly those blocks, pasted
// whole into `bash -e` in an empty directory with adapterctl on the PATH and this
// checkout for /path/to/adapterkit; the adapter must pass check and answer the call.
// It also wants the built adapter's "#!" line to be the absolute path of the python3 the
// README's command ran. Without python3 it is skipped, unless $ADAPTERKIT_REQUIRE_SDKS
// names python.
func TestPythonREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Python adapter and checks it")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's steps are for a POSIX shell")
	}
	sh, py, section := sdkREADMESteps(t, "python", "sdk/python/README.md", "python", "bash", "python3")
	if len(sh) != 1 || py == "" || !strings.Contains(section, "`hello.py`") {
		t.Fatalf("want hello.py and one sh block (build, check and call); got %d and %v", len(sh), py != "")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	project, bin := filepath.Join(tmp, "hello"), filepath.Join(tmp, "bin")
	for _, d := range []string{project, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(buildBinT(t, "cmd/adapterctl"), filepath.Join(bin, "adapterctl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "hello.py"), []byte(py), 0o644); err != nil {
		t.Fatal(err)
	}
	block := strings.ReplaceAll(sh[0], "/path/to/adapterkit", root)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-e")
	cmd.Dir = project
	cmd.Stdin = strings.NewReader(block)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("$ bash -e <<'EOF'\n%sEOF\n%s", block, out)
	if err != nil {
		t.Fatalf("the block failed: %v\n%s\n%s", err, block, out)
	}
	for _, want := range []string{"PASSED", `"greeting":"hello, ada"`} {
		if !strings.Contains(strings.ReplaceAll(string(out), " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the check and call printed no %s:\n%s", want, out)
		}
	}

	// The #! line is the python3 the README ran, by its absolute path.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.ReadFile(filepath.Join(project, "adapters", "hello_v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(f), "\n")
	if want := "#!" + strings.TrimSpace(string(exe)); first != want || !filepath.IsAbs(strings.TrimPrefix(first, "#!")) {
		t.Errorf("the adapter's first line is %q, want %q", first, want)
	}
}
