package plugin_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair and returns its terminal side (what a shell's
// stdin is) and its controlling side.
func openPty(t *testing.T) (tty, ptmx *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening the pty's terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty, ptmx
}

// An adapter run in a terminal (`./adapter` at a shell prompt) does not wait silently:
// it says at once that it is an adapter a host starts, with the commands to try it.
func TestMainTerminalOnStdin(t *testing.T) {
	tty, _ := openPty(t)
	status, stdout, stderr := runByHand(t, tty)
	checkByHandMessage(t, status, stdout, stderr, "stdin is a terminal.")
}

// An invalid adapter run in a terminal also says that a host would refuse it, and why.
func TestMainTerminalInvalidAdapter(t *testing.T) {
	tty, _ := openPty(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=invalid")
	cmd.Stdin = tty
	stderr := new(syncBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = waitChild(cmd)
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit status %d, want %d", code, 2)
	}
	for _, want := range []string{"stdin is a terminal", "a host would refuse it as it is", "invalid catalog (R21)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
