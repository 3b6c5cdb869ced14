package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// backgroundLine matches a line run in the background (ending in &, before any comment).
var backgroundLine = regexp.MustCompile(`[^&]&\s*(#.*)?$`)

// socketFlag finds the --socket of a background daemon line.
var socketFlag = regexp.MustCompile(`--socket\s+(\S+)`)

// shell is one bash process fed the README's lines one at a time, as a person types
// them: state (exported variables, background jobs) carries over between lines.
type shell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuf
}

// syncBuf is a bytes.Buffer safe for a process's writer and the test.
type syncBuf struct {
	ch  chan struct{}
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.ch <- struct{}{}
	defer func() { <-b.ch }()
	return b.buf.Write(p)
}

// take returns what was written since the last take.
func (b *syncBuf) take() string {
	b.ch <- struct{}{}
	defer func() { <-b.ch }()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

const rcMarker = "__readme_rc="

// run runs one line and returns its exit status, stdout and stderr.
func (s *shell) run(t *testing.T, line string, timeout time.Duration) (int, string, string) {
	t.Helper()
	if _, err := fmt.Fprintf(s.stdin, "%s\necho %s$?\n", line, rcMarker); err != nil {
		t.Fatalf("writing to bash: %v", err)
	}
	type res struct {
		rc  int
		out string
		err error
	}
	done := make(chan res, 1)
	go func() {
		var out strings.Builder
		for {
			l, err := s.out.ReadString('\n')
			if err != nil {
				done <- res{-1, out.String(), err}
				return
			}
			if rc, ok := strings.CutPrefix(l, rcMarker); ok {
				var n int
				fmt.Sscanf(rc, "%d", &n)
				done <- res{n, out.String(), nil}
				return
			}
			out.WriteString(l)
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("%s: bash ended: %v\n%s", line, r.err, s.stderr.take())
		}
		return r.rc, r.out, s.stderr.take()
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		t.Fatalf("%s: no answer within %v\nstderr:\n%s", line, timeout, s.stderr.take())
	}
	return 0, "", ""
}

// TestReadmeCommands runs every adapterctl command shown in README.md verbatim, from
// the repository root, after building what `make demo` builds (adapterctl into build/,
// the example adapters into build/adapters). Each ```sh block that shows an adapterctl
// command runs line by line in one bash, as typed; a line ending in & (the daemon) is
// followed, as a person would wait, by waiting for its socket to appear. Every line
// must exit 0, and the block's background jobs must be gone at its end.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example adapters and runs the README's commands")
	}
	for _, tool := range []string{"bash", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is needed to run the README's commands: %v", tool, err)
		}
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
		}
	}
	if commands < 6 {
		t.Fatalf("found %d adapterctl commands in README.md, want the list, inspect, call, check, serve and status at least", commands)
	}

	// What `make demo` builds.
	for _, step := range [][]string{
		{"make", "-s", "adapters"},
		{"go", "build", "-o", filepath.Join("build", "adapterctl"), "./cmd/adapterctl"},
	} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}

	for i, block := range blocks {
		t.Run(fmt.Sprintf("block%d", i+1), func(t *testing.T) { runReadmeBlock(t, root, block) })
	}
}

func runReadmeBlock(t *testing.T, root string, block []string) {
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Dir = root
	// A clean search path: the README must say where adapterctl is.
	cmd.Env = append(os.Environ(), "PATH="+cleanPath())
	stderr := &syncBuf{ch: make(chan struct{}, 1)}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &shell{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), stderr: stderr}
	defer func() {
		// Whatever the block left running in the background ends with it.
		fmt.Fprintln(stdin, `kill $(jobs -p) 2>/dev/null; wait; exit`)
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("bash did not end after the block")
		}
	}()
	for _, line := range block {
		background := backgroundLine.MatchString(line)
		rc, out, errOut := sh.run(t, line, 3*time.Minute)
		t.Logf("$ %s\n%s%s", line, out, errOut)
		if rc != 0 {
			t.Fatalf("%q exited %d\nstdout:\n%s\nstderr:\n%s", line, rc, out, errOut)
		}
		if background {
			m := socketFlag.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			waitSocket(t, sh, m[1])
		}
	}
	// The block stops what it started: its daemon ends, with every adapter's process
	// tree verified gone (status 0). Without a stop in the README this wait times out.
	rc, out, errOut := sh.run(t, "wait", time.Minute)
	if rc != 0 {
		t.Errorf("a background job of the block ended with status %d\nstdout:\n%s\nstderr:\n%s", rc, out, errOut)
	}
}

// waitSocket waits, as a person would, until the daemon's socket accepts connections
// (a stale socket file of an earlier daemon may exist until the new one replaces it).
func waitSocket(t *testing.T, sh *shell, socket string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the daemon's socket %s did not appear\nstderr:\n%s", socket, sh.stderr.take())
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
