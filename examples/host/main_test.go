package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds the demo so that a broken test fails instead of hanging.
const wait = time.Minute

// buildAdapters installs the example adapters into a fresh directory as `make
// adapters` does, plus a file that discovery rejects.
func buildAdapters(t *testing.T, withPython bool) string {
	t.Helper()
	dir := testkit.BuildT(t, testkit.Thermometer, testkit.Echo, testkit.Console)
	if withPython { // as `make adapters` builds it
		cmd := exec.Command("python3", filepath.Join("..", "..", "sdk", "python", "tools", "build_adapter.py"),
			filepath.Join("..", "..", "sdk", "python", "examples", "echo.py"), filepath.Join(dir, "pyecho_v1.0.0"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building pyecho: %v\n%s", err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not an adapter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tsEcho installs tsecho into dir as `make adapters` does (sdk/make.sh: a launcher
// importing the compiled echo example), where node is installed and the TypeScript
// SDK is built; it reports whether it did.
func tsEcho(t *testing.T, dir string) bool {
	t.Helper()
	echo, err := filepath.Abs(filepath.Join("..", "..", "sdk", "typescript", "dist", "examples", "echo.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Logf("tsecho not tried: %v", err)
		return false
	}
	if _, err := os.Stat(echo); err != nil {
		t.Logf("tsecho not tried: the TypeScript SDK is not built (make adapters): %v", err)
		return false
	}
	launcher := "#!/usr/bin/env node\nimport(" + strconv.Quote(echo) + ");\n"
	if err := os.WriteFile(filepath.Join(dir, "tsecho_v1.0.0"), []byte(launcher), 0o755); err != nil {
		t.Fatal(err)
	}
	return true
}

func runDemo(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &out, &errOut)
	t.Logf("output:\n%s\nstderr:\n%s", out.String(), errOut.String())
	return code, out.String()
}

func TestDemo(t *testing.T) {
	_, err := exec.LookPath("python3")
	withPython := err == nil
	dir := buildAdapters(t, withPython)
	withTS := tsEcho(t, dir)
	code, out := runDemo(t, "-dir", dir)
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	want := []string{
		"rejected " + filepath.Join(dir, "README.txt") + ": bad name",
		"thermometer 1.0.0: inlet reads 21.5 °C",
		"thermometer 1.0.0: slow read given up after 200ms: code=deadline uncertain=true",
		`echo 1.2.0: fail answered code=denied message="not for you" uncertain=false`,
		`printed "hello from console" (streamed until eof)`,
		"all adapters closed, process trees verified gone", // R63
	}
	if withPython {
		want = append(want, `pyecho 1.0.0: echo("hello from python") = "hello from python"`)
	} else {
		want = append(want, "pyecho: not installed, skipped")
	}
	if withTS {
		want = append(want, `tsecho 1.0.0: echo("hello from typescript") = "hello from typescript"`)
	} else {
		want = append(want, "tsecho: not installed, skipped")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Error("a step failed")
	}
}

// Optional adapters are skipped; a missing required one fails the run, which still
// closes what it opened.
func TestDemoMissingAdapters(t *testing.T) {
	dir := t.TempDir()
	// The same directory twice is refused by discovery: nothing is opened.
	code, out := runDemo(t, "-dir", dir+","+dir+"/")
	if code != 1 || !strings.Contains(out, "discovery: FAILED") {
		t.Fatalf("exit status %d, want 1 with discovery failed", code)
	}
	code, out = runDemo(t, "-dir", dir)
	if code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	for _, w := range []string{
		"discovery: 0 adapter(s), 0 file(s) rejected",
		"thermometer: FAILED",
		"echo: FAILED",
		"console: not installed, skipped",
		"pyecho: not installed, skipped",
		"tsecho: not installed, skipped",
		"rsecho: not installed, skipped",
		"all adapters closed, process trees verified gone",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-dir", ""}, {"-dir", "x", "extra"}, {"-nope"}} {
		if code, _ := runDemo(t, args...); code != 2 {
			t.Errorf("run %q: exit status %d, want 2", args, code)
		}
	}
}
