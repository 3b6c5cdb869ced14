package plugin_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// runByHand runs the "device" child adapter with the given stdin (a file: a pipe or a
// terminal) and returns its exit status, stdout and stderr.
func runByHand(t *testing.T, stdin *os.File) (int, string, string) {
	t.Helper()
	var cmd *exec.Cmd
	stderr := new(syncBuffer)
	stdout := new(syncBuffer)
	for try := 0; ; try++ {
		cmd = exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=device")
		cmd.Stdin = stdin
		cmd.Stderr, cmd.Stdout = stderr, stdout
		err := cmd.Start()
		if err == nil {
			break
		}
		// Nothing was started, so nothing read the input: the same pipe serves again.
		if try > 0 || !errors.Is(err, errWineInternal) ||
			!testkit.WineGap(t, "the child starts at the first try", "CreateProcess fails now and then with ERROR_INTERNAL_ERROR") {
			t.Fatal(err)
		}
	}
	err := waitChild(cmd)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("adapter run by hand: %v (stderr: %s)", err, stderr)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// errWineInternal is Windows' ERROR_INTERNAL_ERROR, which Wine's CreateProcess
// returns now and then on a loaded machine.
const errWineInternal = syscall.Errno(1359)

// textStdin returns a pipe whose other end has written text and been closed, as in
// `echo hi | ./adapter`.
func textStdin(t *testing.T, text string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := io.WriteString(w, text); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return r
}

// checkByHandMessage asserts the explanation Main gives a person, once.
func checkByHandMessage(t *testing.T, status int, stdout, stderr, what string) {
	t.Helper()
	if status != 2 {
		t.Errorf("exit status %d, want %d", status, 2)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	for _, want := range []string{what, "This program is an adapter", "adapterctl call ", " test.device.read '{}'", "adapterctl inspect "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// The module is installed from a clone (it is not on the module proxy): the hint
	// says how, and never suggests `go install …@latest`, which cannot work.
	if strings.Contains(stderr, "@latest") || !strings.Contains(stderr, "go install ./cmd/adapterctl") {
		t.Errorf("the hint does not give a command that works from a clone:\n%s", stderr)
	}
	if n := strings.Count(stderr, "This program is an adapter"); n != 1 {
		t.Errorf("the explanation is printed %d times:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "[WARN]") {
		t.Errorf("the cause is also logged:\n%s", stderr)
	}
}

// A person piping text into an adapter (`echo hi | ./adapter`, or typing `hello`) is
// told what the program is and how to try it, once; the frame error reading as text
// is recognised whether the text fills a header ("hello") or not ("hi").
func TestMainTextOnStdin(t *testing.T) {
	for _, c := range []struct{ text, quoted string }{
		{"hello\n", `"hell"`},
		{"hi\n", `"hi\n"`},
		{"{\"type\":\"request\"}\n", `"{\"ty"`},
	} {
		t.Run(strings.TrimSpace(c.text), func(t *testing.T) {
			status, stdout, stderr := runByHand(t, textStdin(t, c.text))
			checkByHandMessage(t, status, stdout, stderr, "the input is text, not protocol frames (it began with "+c.quoted+")")
		})
	}
}

// A host violation that is not text is reported once (not logged and printed both),
// with exit status 1.
func TestMainViolationReportedOnce(t *testing.T) {
	status, _, stderr := runByHand(t, textStdin(t, "\x00\x00\x00\x00"))
	if status != 1 {
		t.Errorf("exit status %d, want %d", status, 1)
	}
	if n := strings.Count(stderr, proto.ErrFrameEmpty.Error()); n != 1 {
		t.Errorf("the violation is reported %d times, want once:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "This program is an adapter") {
		t.Errorf("a zero-length frame is not text:\n%s", stderr)
	}
}
