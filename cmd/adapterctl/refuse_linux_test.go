package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDaemonRefusesOtherUserClearly: a daemon run as nobody, on a socket root made
// and passed to it (as systemd does: the client then sees root listening and trusts
// it), refuses a client of another user (root here) with a message saying why and
// what to do, not a bare "connection reset by peer"; the client exits 3.
func TestDaemonRefusesOtherUserClearly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the daemon as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	dir := shortDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := adapterctlBin(t, dir)
	adapters := filepath.Join(dir, "adapters")
	if err := os.Mkdir(adapters, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ctl.sock")
	ln := listenerFile(t, "unix", sock)
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
		"/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin, "serve", "--state-dir", "none", adapters)
	cmd.ExtraFiles = []*os.File{ln}
	cmd.Env = append(os.Environ(), "LISTEN_FDS=1", "LISTEN_FDNAMES=control")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = ln.Close()
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			ready <- sc.Text()
		}
		for sc.Scan() {
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case l := <-ready:
		if !strings.Contains(l, "serving") {
			t.Fatalf("ready line %q\n%s", l, stderr.String())
		}
	case err := <-exited:
		exited <- err // for the cleanup
		t.Fatalf("the daemon as nobody exited before it was ready: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		err := <-exited // its standard error is whole, and no longer written, once it has been waited for
		exited <- err
		t.Fatalf("the daemon as nobody did not get ready:\n%s", stderr.String())
	}
	want := fmt.Sprintf("this daemon answers only clients of its own user, uid 65534 (nobody); this client runs as uid %d", os.Getuid())
	for _, args := range [][]string{{"ping", "--socket", sock}, {"status", "--socket", sock}, {"wait", "--socket", sock, "--timeout", "20s"}} {
		r := runCmd(t, "", args...)
		r.want(t, ExitBroken, nil, []string{want, "permission_denied"})
		if strings.Contains(r.stderr, "reset by peer") {
			t.Errorf("%v: %s", args, r.stderr)
		}
	}
}
