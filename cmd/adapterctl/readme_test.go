//go:build linux || darwin

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// readmeBlocks returns the lines of every ```sh block of README.md that shows an
// adapterctl command, without blank and comment-only lines, in order.
func readmeBlocks(readme string) [][]string {
	var blocks [][]string
	var cur []string
	in, hasCmd := false, false
	for _, line := range strings.Split(readme, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in, hasCmd, cur = true, false, nil
		case in && trimmed == "```":
			in = false
			if hasCmd {
				blocks = append(blocks, cur)
			}
		case in && trimmed != "" && !strings.HasPrefix(trimmed, "#"):
			cur = append(cur, trimmed)
			hasCmd = hasCmd || strings.HasPrefix(trimmed, "adapterctl ")
		}
	}
	return blocks
}

// TestReadmeCommands runs every ```sh block of README.md that shows an adapterctl
// command as a person pastes it: whole, into `bash -e`, from a directory laid out as the
// repository root is after `make demo` (adapterctl in build/, the Go example adapters in
// build/adapters). Every block must exit 0 with nothing of it left running; the block
// that starts a daemon in the background must then show, in its status, an adapter in
// state running. The directory is the test's own, and the README's --listen address is
// swapped for a free one, so that a person following the README while the tests run is not
// disturbed (nor finds the test's certificates in build/pki afterwards); the README
// therefore names only paths under build/.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example adapters and runs the README's commands")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("bash is needed to run the README's commands: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(string(readme))
	commands := 0
	for _, b := range blocks {
		for _, l := range b {
			if strings.HasPrefix(l, "adapterctl ") {
				commands++
			}
			if strings.Contains(l, "/tmp/") {
				t.Errorf("README.md names a path outside build/, which the test cannot give its own copy: %s", l)
			}
		}
	}
	if commands < 6 {
		t.Fatalf("found %d adapterctl commands in README.md, want the list, inspect, call, check, serve and status at least", commands)
	}

	// What `make demo` builds, in a directory of the test's own (short: socket paths
	// are limited to about 100 bytes).
	dir := shortDir(t)
	for _, b := range [][2]string{
		{"build/adapterctl", "./cmd/adapterctl"},
		{"build/adapters/thermometer_v1.0.0", "./examples/thermometer"},
		{"build/adapters/echo_v1.2.0", "./examples/echo"},
		{"build/adapters/console_v1.0.0", "./examples/console"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1])
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}

	daemons := 0
	for i, b := range blocks {
		text := strings.Join(b, "\n") + "\n"
		if m := listenFlag.FindStringSubmatch(text); m != nil {
			text = strings.ReplaceAll(text, m[1], freeAddr(t))
		}
		out, errOut := pasteBlock(t, dir, text)
		if strings.Contains(text, "adapterctl serve ") && strings.Contains(text, "adapterctl status --socket") {
			daemons++
			if !runningAdapter.MatchString(out) {
				t.Errorf("block %d: its status shows no adapter in state running:\n%s\nstderr:\n%s", i+1, out, errOut)
			}
		}
	}
	if daemons == 0 {
		t.Error("no README block starts a daemon and asks its status")
	}
}

// listenFlag finds the TCP address a README daemon listens on (and its clients use).
var listenFlag = regexp.MustCompile(`--listen\s+(\S+)`)

// runningAdapter matches a row of status's adapters table in state running.
var runningAdapter = regexp.MustCompile(`(?m)^[ \t]*\S+[ \t]+\S+[ \t]+running\b`)

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// pasteBlock runs text in `bash -e` in dir, as pasted into a terminal, and fails t
// unless it exits 0 with no process of its own left behind.
func pasteBlock(t *testing.T, dir, text string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-e")
	cmd.Dir = dir
	// A clean search path: the README must say where adapterctl is.
	cmd.Env = append(os.Environ(), "PATH="+cleanPath())
	cmd.Stdin = strings.NewReader(text)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A daemon the block left behind holds bash's stdout: Wait does not wait for it.
	cmd.WaitDelay = 5 * time.Second
	var out, errOut testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.Process != nil && stopGroup(cmd.Process.Pid) {
		t.Errorf("the block left processes running (stopped now):\n%s", text)
	}
	t.Logf("$ bash -e <<'EOF'\n%sEOF\n%s%s", text, out.String(), errOut.String())
	if err != nil {
		t.Fatalf("the block failed: %v\n%s\nstdout:\n%s\nstderr:\n%s", err, text, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// stopGroup ends what is left of process group pgid: SIGTERM first (a daemon then
// closes its adapters verified), SIGKILL after 15 s. It reports whether anything was left.
func stopGroup(pgid int) bool {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return false
	}
	if testkit.Within(15*time.Second, func() bool { return syscall.Kill(-pgid, 0) != nil }) {
		return true
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return true
}

// cleanPath returns $PATH without any directory holding an adapterctl, so that the
// commands find only what the README puts on the path.
func cleanPath() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "adapterctl")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}
