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

// The TypeScript SDK's README starts a user from an empty directory: build the SDK in a
// checkout, write package.json and tsconfig.json, install the compiler, Node's types and
// the SDK, write src/hello.ts, build it, and check and call it with adapterctl. This test
// runs exactly those blocks, in that order, each pasted whole into `bash -e`: the SDK
// steps in a copy of this checkout's sdk/typescript (what /path/to/adapterkit stands
// for), the others in an empty directory with adapterctl on the PATH. A README whose
// setup a new user cannot follow (a CommonJS package.json, a tsconfig without Node's
// module resolution or types: TS1295, TS2307) fails it. It needs node, npm and the npm
// registry; without node or npm it is skipped, unless $ADAPTERKIT_REQUIRE_SDKS names
// typescript.
func TestTypeScriptREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("installs packages from the npm registry and builds an adapter")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's steps are for a POSIX shell")
	}
	sh, ts, section := sdkREADMESteps(t, "typescript", "sdk/typescript/README.md", "ts", "bash", "node", "npm")
	if len(sh) != 3 || ts == "" || !strings.Contains(section, "`src/hello.ts`") {
		t.Fatalf("want three sh blocks (build the SDK, set up the directory, build and check) and src/hello.ts; got %d and %v", len(sh), ts != "")
	}

	tmp := t.TempDir()
	checkout := filepath.Join(tmp, "adapterkit")
	copySDK(t, "../sdk/typescript", filepath.Join(checkout, "sdk", "typescript"))
	project := filepath.Join(tmp, "hello")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{project, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(buildBinT(t, "cmd/adapterctl"), filepath.Join(bin, "adapterctl")); err != nil {
		t.Fatal(err)
	}
	paste := func(block string) string {
		t.Helper()
		block = strings.ReplaceAll(block, "/path/to/adapterkit", checkout)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
		return string(out)
	}
	paste(sh[0])
	paste(sh[1])
	if err := os.WriteFile(filepath.Join(project, "src", "hello.ts"), []byte(ts), 0o644); err != nil {
		t.Fatal(err)
	}
	out := paste(sh[2])
	for _, want := range []string{"PASSED", `"greeting":"hello, ada"`} {
		if !strings.Contains(strings.ReplaceAll(out, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the check and call printed no %s:\n%s", want, out)
		}
	}
}

// copySDK copies the TypeScript SDK's sources (not its node_modules or dist) from src
// to dst.
func copySDK(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
