package platform

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/platform/internal/launch"
)

// The launcher stage is recognised by its argv alone, so anyone who may run the host's
// binary can make it one, with descriptors and a specification of their own. That gains
// nothing from an ordinary binary; from a set-user-ID one it would (the stage drops
// capabilities but executes the chosen program with the binary owner's effective uid),
// so the stage refuses to run whenever its real and effective ids differ. Here nobody
// runs a set-user-ID copy of this binary (owned by setuidUID) as a launcher told to run
// "id -u": it must fail at that step instead of printing setuidUID.
func TestLauncherRefusesSetID(t *testing.T) {
	requireRoot(t)
	dir, err := os.MkdirTemp("", "adapterkit-launch-setid-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	setuidCopy := filepath.Join(dir, "launcher")
	copyFile(t, mustExecutable(), setuidCopy, 0o755)
	if err := os.Chown(setuidCopy, setuidUID, setuidUID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(setuidCopy, 0o755|os.ModeSetuid); err != nil { // after chown, which clears set-uid
		t.Fatal(err)
	}
	spec, err := os.Create(filepath.Join(dir, "spec"))
	if err != nil {
		t.Fatal(err)
	}
	defer spec.Close()
	allow := []unix.SockFilter{{Code: bpfRet, K: retAllow}}
	if _, err := spec.Write(launch.Encode(&launch.Spec{Path: "/usr/bin/id", Argv: []string{"id", "-u"}, Filter: allow})); err != nil {
		t.Fatal(err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer statusR.Close()
	cmd := &exec.Cmd{Path: setuidCopy, Args: []string{launch.Arg0, launch.Arg1}, Dir: "/"}
	cmd.ExtraFiles = []*os.File{nil, spec, nil, statusW} // 3, 4 (spec), 5, 6 (status)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	statusW.Close()
	if strings.TrimSpace(string(out)) == strconv.Itoa(setuidUID) {
		t.Fatalf("nobody ran a program as uid %d through the set-user-ID launcher (%v, %s)", setuidUID, err, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(stderr.String(), "set-user-ID") {
		t.Fatalf("launcher: %v, stdout %q, stderr %q; want exit 127 naming the set-user-ID check", err, out, stderr.String())
	}
}
