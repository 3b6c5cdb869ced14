package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// notifyReceiver is the test's stand-in for systemd's notification socket.
type notifyReceiver struct {
	conn *net.UnixConn
	msgs chan string
}

func newNotifyReceiver(t *testing.T, addr string) *notifyReceiver {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	r := &notifyReceiver{conn: c, msgs: make(chan string, 16)}
	go func() {
		defer close(r.msgs)
		b := make([]byte, 4096)
		for {
			n, err := c.Read(b)
			if err != nil {
				return
			}
			r.msgs <- string(b[:n])
		}
	}()
	t.Cleanup(func() { _ = c.Close() })
	return r
}

// next returns the next datagram, failing after a generous wait.
func (r *notifyReceiver) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-r.msgs:
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no notification within 30 s")
		return ""
	}
}

// TestServeSystemd: the test plays systemd. It passes a listening Unix socket as
// descriptor 3 (LISTEN_FDS=1, LISTEN_PID set in the child as systemd does between
// fork and exec) and a datagram NOTIFY_SOCKET, and runs the real program without
// --socket. READY=1 (with STATUS=) comes once it serves, Ping works through the
// passed socket, an adapter (started with the whole environment, --inherit-env) has
// neither the variables nor the descriptor, SIGHUP is announced as RELOADING=1 then
// READY=1, SIGTERM brings STOPPING=1, and serve exits 0 with every tree verified
// gone, leaving the socket file (systemd's) in place.
func TestServeSystemd(t *testing.T) {
	dir := shortDir(t)
	bin := filepath.Join(dir, "adapterctl")
	//lint:ignore SA1019 this test binary runs on the machine that built it
	goTool := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "ctl.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	lf, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	var lst syscall.Stat_t
	if err := syscall.Fstat(int(lf.Fd()), &lst); err != nil {
		t.Fatal(err)
	}
	passed := fmt.Sprintf("socket:[%d]", lst.Ino) // how /proc/PID/fd shows it
	_ = ln.Close()                                // the child holds the socket now (lf), as with systemd
	notify := newNotifyReceiver(t, filepath.Join(dir, "notify"))

	// LISTEN_PID must be the service's own pid: the shell sets it to its own and
	// then becomes adapterctl (exec keeps the pid).
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin, "serve", "--inherit-env", goodDir)
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Env = append(os.Environ(), "LISTEN_FDS=1", "LISTEN_FDNAMES=control", "NOTIFY_SOCKET="+filepath.Join(dir, "notify"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = lf.Close()
	exited := make(chan struct{})
	var out string
	var waitErr error
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(stdout))
		out = string(b)
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	if m := notify.next(t); m != "READY=1\nSTATUS=serving 2 adapters from "+goodDir {
		t.Fatalf("first notification %q\nstderr:\n%s", m, stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := controlplane.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping through the passed socket: %v", err)
	}
	if _, err := c.Send(ctx, controlplane.SendParams{Adapter: "echo", Method: "example.echo.echo", Params: json.RawMessage(`{}`), TimeoutMS: 30000}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil || len(st.Adapters) != 1 || st.Adapters[0].PID == 0 {
		t.Fatalf("status: %+v %v", st, err)
	}
	pid := st.Adapters[0].PID
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET":
			t.Errorf("the adapter inherited %s", kv)
		}
	}
	if len(environ) == 0 || !strings.Contains(string(environ), "PATH=") {
		t.Errorf("--inherit-env did not pass the environment: %q", environ)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if target == passed {
			t.Errorf("the adapter holds the passed socket as descriptor %s", fd.Name())
		}
	}

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if m := notify.next(t); !strings.HasPrefix(m, "RELOADING=1\nMONOTONIC_USEC=") {
		t.Fatalf("after SIGHUP %q", m)
	}
	if m := notify.next(t); !strings.HasPrefix(m, "READY=1\n") {
		t.Fatalf("after the reload %q", m)
	}
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping after SIGHUP: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if m := notify.next(t); !strings.HasPrefix(m, "STOPPING=1") {
		t.Fatalf("after SIGTERM %q", m)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s of SIGTERM")
	}
	if waitErr != nil {
		t.Errorf("serve: %v\nstderr:\n%s", waitErr, stderr.String())
	}
	if !strings.HasSuffix(out, "adapterctl serve: stopped; every adapter closed, process trees verified gone\n") {
		t.Errorf("stdout:\n%s", out)
	}
	testkit.Gone(t, pid)
	if _, err := os.Lstat(sock); err != nil {
		t.Errorf("the passed socket's file was removed: %v", err)
	}
}
