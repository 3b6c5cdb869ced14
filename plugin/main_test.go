package plugin_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// startChild runs this test binary as an adapter process in the given mode.
func startChild(t *testing.T, mode string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.Reader, stderr *syncBuffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	stderr = new(syncBuffer)
	cmd.Stderr = stderr
	var err error
	if stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdin, stdout, stderr
}

// R6: whatever the adapter prints to stdout, through any path, goes to stderr; the
// protocol stream carries frames only. R49: the process exits 0 on stdin EOF.
func TestMainProtectsStdout(t *testing.T) {
	cmd, stdin, stdout, stderr := startChild(t, "noisy")
	send := func(p []byte) {
		frame, err := proto.AppendFrame(nil, p, 0, false)
		if err == nil {
			_, err = stdin.Write(frame)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r := proto.NewReader(stdout, 0)
	var replies []proto.Message
	for len(replies) < 2 {
		// R18: the next request only once the previous reply has arrived.
		if len(replies) == 0 {
			send(proto.AppendRequest(nil, 1, proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`)))
		} else {
			send(proto.AppendRequest(nil, 2, "test.noisy.print", []byte(`{"hello":"world"}`)))
		}
		p, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("protocol stream broken after %d replies: %v (stderr: %s)", len(replies), err, stderr)
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			t.Fatalf("invalid envelope %q: %v", p, err)
		}
		replies = append(replies, m)
	}
	if replies[0].Type != proto.TypeResult || replies[1].Type != proto.TypeResult || string(replies[1].Value) != `{"hello":"world"}` {
		t.Fatalf("replies %+v", replies)
	}
	stdin.Close()
	rest, err := io.ReadAll(stdout)
	if err != nil || len(rest) != 0 {
		t.Fatalf("after the replies stdout had %q (%v)", rest, err)
	}
	if err := waitChild(cmd); err != nil {
		t.Fatalf("adapter exit: %v (stderr: %s)", err, stderr)
	}
	for _, want := range []string{"garbage during initialize", "garbage from fmt.Println", "garbage via os.Stdout", "garbage via the stdout descriptor", "garbage from a child process"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
}

// R19-R25 through Main: an invalid catalog exits 1 with a clear message on stderr,
// before anything is read, and nothing is written to stdout.
func TestMainInvalidCatalog(t *testing.T) {
	cmd, stdin, stdout, stderr := startChild(t, "invalid")
	defer stdin.Close()
	out, err := io.ReadAll(stdout)
	if err != nil || len(out) != 0 {
		t.Fatalf("stdout %q (%v)", out, err)
	}
	var exit *exec.ExitError
	if err := waitChild(cmd); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1", err)
	}
	if !strings.Contains(stderr.String(), "invalid catalog (R21)") {
		t.Fatalf("stderr %q does not explain the catalog error", stderr)
	}
}

// waitChild waits for the child process, bounded.
func waitChild(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		cmd.Process.Kill()
		return errors.New("adapter process did not exit")
	}
}

// syncBuffer is a bytes.Buffer safe for a process's writer and the test.
type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func (b *syncBuffer) lock() {
	if b.mu == nil {
		b.mu = make(chan struct{}, 1)
	}
	b.mu <- struct{}{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.lock()
	defer func() { <-b.mu }()
	return b.buf.String()
}
