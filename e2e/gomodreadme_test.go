package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readmeModuleSection returns the blocks of README.md's "## Using it from your own module":
// the sh blocks in order, and each go block by the file its prose names (the last
// `name.go` in backticks before it).
func readmeModuleSection(t *testing.T) (sh []string, files map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Using it from your own module")
	if start < 0 {
		t.Fatal(`README.md has no "## Using it from your own module"`)
	}
	end := strings.Index(text[start+3:], "\n## ")
	if end < 0 {
		t.Fatal("README.md's module section has no end")
	}
	section := text[start : start+3+end]
	files = map[string]string{}
	fileName := regexp.MustCompile("`([\\w/]+\\.go)`")
	prev := 0
	for _, m := range regexp.MustCompile("(?ms)^```(sh|go)\n(.*?)^```").FindAllStringSubmatchIndex(section, -1) {
		kind, body := section[m[2]:m[3]], section[m[4]:m[5]]
		prose := section[prev:m[0]]
		prev = m[1]
		if kind == "sh" {
			sh = append(sh, body)
			continue
		}
		names := fileName.FindAllStringSubmatch(prose, -1)
		if len(names) == 0 {
			t.Fatalf("README.md: no file named before the go block:\n%s", body)
		}
		files[names[len(names)-1][1]] = body
	}
	return sh, files
}

// The README's "Using it from your own module" takes a Go developer from an empty
// directory to a host of their own calling an adapter of their own, with adapterkit
// unpublished, and installs adapterctl. This test pastes its blocks in order, each
// whole into `bash -e`, in a fresh module in a temporary directory outside the
// repository (/path/to/adapterkit is this checkout), with GOFLAGS=-mod=mod and the
// environment's module proxy; it writes the files the README shows, and wants the
// host's output line. The install block runs with GOBIN set to a directory of the
// test's own, and the adapterctl it installs must list the adapter the README built.
func TestGoModuleREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own against this checkout, fetching its dependencies")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's steps are for a POSIX shell")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("the README's steps need bash: %v", err)
	}
	sh, files := readmeModuleSection(t)
	if len(sh) != 3 || files["main.go"] == "" || files["thermometer/main.go"] == "" {
		t.Fatalf("want three sh blocks (set up the module, build and run, install adapterctl), main.go and thermometer/main.go; got %d and %d files", len(sh), len(files))
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	project, gobin := filepath.Join(tmp, "myapp"), filepath.Join(tmp, "bin")
	for _, d := range []string{project, gobin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOBIN="+gobin)
	paste := func(block string) string {
		t.Helper()
		block = strings.ReplaceAll(block, "/path/to/adapterkit", root)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-e")
		cmd.Dir = project
		cmd.Stdin = strings.NewReader(block)
		cmd.Env = env
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		t.Logf("$ bash -e <<'EOF'\n%sEOF\n%s", block, out)
		if err != nil {
			t.Fatalf("the block failed: %v\n%s\n%s", err, block, out)
		}
		return string(out)
	}
	paste(sh[0])
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(project, filepath.FromSlash(name)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out := paste(sh[1]); !strings.Contains(out, "inlet: 21.5 °C") {
		t.Errorf("the host printed no %q:\n%s", "inlet: 21.5 °C", out)
	}
	gomod, err := os.ReadFile(filepath.Join(project, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "github.com/adapterkit/adapterkit => "+root) {
		t.Errorf("go.mod does not replace adapterkit by the checkout:\n%s", gomod)
	}

	// The install block, with GOFLAGS as the environment had it: it runs in the
	// checkout, whose go.mod and go.sum it must use, not change.
	env = append(os.Environ(), "GOWORK=off", "GOBIN="+gobin)
	paste(sh[2])
	ctl := filepath.Join(gobin, "adapterctl")
	out, err := exec.Command(ctl, "list", filepath.Join(project, "adapters")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "thermometer") {
		t.Errorf("%s list: %v\n%s", ctl, err, out)
	}
}
