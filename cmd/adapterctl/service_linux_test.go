package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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

// activated is adapterctl serve started the way systemd starts a socket-activated
// Type=notify service.
type activated struct {
	cmd    *exec.Cmd
	notify *notifyReceiver
	// stderr is the daemon's standard error: a file it writes directly, so that what
	// it logged before a notification is there when the notification arrives (a pipe
	// copied by a goroutine may not have been read yet).
	stderr *os.File
	exited chan struct{}
	out    string // stdout, once exited
	err    error  // Wait's, once exited
}

// adapterctlBin builds the real program once per test.
func adapterctlBin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "adapterctl")
	//lint:ignore SA1019 this test binary runs on the machine that built it
	goTool := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// listenerFile returns a listening socket's file, the test's own listener closed: the
// child holds the socket, as with systemd.
func listenerFile(t *testing.T, network, addr string) *os.File {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	_ = ln.Close()
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// socketID is how /proc/PID/fd shows the socket f holds.
func socketID(t *testing.T, f *os.File) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("socket:[%d]", st.Ino)
}

// startActivated runs `adapterctl serve args...` with files as descriptors 3, 4, ...,
// LISTEN_FDS and LISTEN_FDNAMES (names), and a datagram NOTIFY_SOCKET. LISTEN_PID must
// be the service's own pid: the shell sets it to its own and then becomes adapterctl
// (exec keeps the pid), as systemd sets it between fork and exec.
func startActivated(t *testing.T, dir, bin string, files []*os.File, names string, args ...string) *activated {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stderr.Close() })
	a := &activated{notify: newNotifyReceiver(t, filepath.Join(dir, "notify")), stderr: stderr, exited: make(chan struct{})}
	a.cmd = exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin, "serve"}, args...)...)
	a.cmd.ExtraFiles = files
	a.cmd.Env = append(os.Environ(), fmt.Sprintf("LISTEN_FDS=%d", len(files)), "LISTEN_FDNAMES="+names,
		"NOTIFY_SOCKET="+filepath.Join(dir, "notify"))
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_ = f.Close()
	}
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(stdout))
		a.out = string(b)
		a.err = a.cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	})
	return a
}

// stderrText is what the daemon wrote to its standard error so far.
func (a *activated) stderrText() string {
	b, err := os.ReadFile(a.stderr.Name())
	if err != nil {
		return "(stderr unreadable: " + err.Error() + ")"
	}
	return string(b)
}

// expect fails unless the next notification starts with prefix.
func (a *activated) expect(t *testing.T, prefix string) string {
	t.Helper()
	m := a.notify.next(t)
	if !strings.HasPrefix(m, prefix) {
		t.Fatalf("notification %q, want %q...\nstderr:\n%s", m, prefix, a.stderrText())
	}
	return m
}

func (a *activated) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := a.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// stop sends SIGTERM, expects STOPPING=1, and a clean, verified exit.
func (a *activated) stop(t *testing.T) {
	t.Helper()
	a.signal(t, syscall.SIGTERM)
	a.expect(t, "STOPPING=1")
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s of SIGTERM")
	}
	if a.err != nil {
		t.Errorf("serve: %v\nstderr:\n%s", a.err, a.stderrText())
	}
	if !strings.HasSuffix(a.out, "adapterctl serve: stopped; every adapter closed, process trees verified gone\n") {
		t.Errorf("stdout:\n%s", a.out)
	}
}

// TestServeSystemd: the test plays systemd. It passes a listening Unix socket as
// descriptor 3 (LISTEN_FDS=1) and a datagram NOTIFY_SOCKET, and runs the real program
// without --socket. READY=1 (with STATUS=) comes once it serves, Ping works through
// the passed socket, an adapter (started with the whole environment, --inherit-env)
// has neither the variables nor the descriptor, SIGHUP is announced as RELOADING=1
// then READY=1, SIGTERM brings STOPPING=1, and serve exits 0 with every tree verified
// gone, leaving the socket file (systemd's) in place.
func TestServeSystemd(t *testing.T) {
	dir := shortDir(t)
	bin := adapterctlBin(t, dir)
	sock := filepath.Join(dir, "ctl.sock")
	lf := listenerFile(t, "unix", sock)
	passed := socketID(t, lf)
	a := startActivated(t, dir, bin, []*os.File{lf}, "control", "--inherit-env", goodDir)

	if m := a.expect(t, "READY=1"); m != "READY=1\nSTATUS=serving 2 adapters from "+goodDir {
		t.Fatalf("first notification %q", m)
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
	if !strings.Contains(string(environ), "PATH=") {
		t.Errorf("--inherit-env did not pass the environment: %q", environ)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == passed {
			t.Errorf("the adapter holds the passed socket as descriptor %s", fd.Name())
		}
	}

	a.signal(t, syscall.SIGHUP)
	a.expect(t, "RELOADING=1\nMONOTONIC_USEC=")
	a.expect(t, "READY=1\n")
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping after SIGHUP: %v", err)
	}

	a.stop(t)
	testkit.Gone(t, pid)
	if _, err := os.Lstat(sock); err != nil {
		t.Errorf("the passed socket's file was removed: %v", err)
	}
}

// TestServeSystemdTCP: a passed Unix socket and a passed TCP socket are the control
// socket and the --listen endpoint (the TLS flags given, --listen not); a remote
// client reaches the daemon through the TCP one with mutual TLS; SIGHUP re-reads the
// certificate files before READY=1 is sent; a third socket named "metrics" serves
// /metrics.
func TestServeSystemdTCP(t *testing.T) {
	dir := shortDir(t)
	bin := adapterctlBin(t, dir)
	pki := makeTestCerts(t)
	sock := filepath.Join(dir, "ctl.sock")
	tcp := listenerFile(t, "tcp", "127.0.0.1:0")
	metrics := listenerFile(t, "tcp", "127.0.0.1:0")
	addrOf := func(f *os.File) string {
		sa, err := syscall.Getsockname(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	}
	remoteAddr, metricsAddr := addrOf(tcp), addrOf(metrics)
	var tlsFlags []string
	for _, f := range serveFlags(pki) {
		if f != "--listen" && f != "127.0.0.1:0" {
			tlsFlags = append(tlsFlags, f)
		}
	}
	a := startActivated(t, dir, bin, []*os.File{listenerFile(t, "unix", sock), tcp, metrics}, "control:remote:metrics",
		append(append([]string{"--log", "info"}, tlsFlags...), goodDir)...)
	a.expect(t, "READY=1\nSTATUS=serving 2 adapters")
	runCmd(t, "", append([]string{"ping"}, clientFlags(remoteAddr, pki, "alice")...)...).want(t, ExitOK, []string{"tls://" + remoteAddr}, nil)
	runCmd(t, "", "ping", "--socket", sock).want(t, ExitOK, nil, nil)
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "adapterkit_daemon_tls_cert_not_after_timestamp_seconds ") {
		t.Errorf("metrics from the passed socket lack the daemon's figures:\n%s", body)
	}

	a.signal(t, syscall.SIGHUP)
	a.expect(t, "RELOADING=1\nMONOTONIC_USEC=")
	a.expect(t, "READY=1\n")
	// READY=1 follows the reload: the daemon logged it before.
	if !strings.Contains(a.stderrText(), "certificates reloaded") {
		t.Errorf("READY=1 before the certificates were reloaded:\n%s", a.stderrText())
	}
	a.stop(t)
}

// TestReloadReadyAfterReload: under a service manager, SIGHUP is announced at once
// (RELOADING=1) and READY=1 waits for the daemon's reload of its certificate files to
// end, as Type=notify-reload requires. (The wait for a READY=1 sent too early is a
// bound on a negative, not a condition for passing.)
func TestReloadReadyAfterReload(t *testing.T) {
	dir := shortDir(t)
	rcv := newNotifyReceiver(t, filepath.Join(dir, "notify"))
	t.Setenv("NOTIFY_SOCKET", filepath.Join(dir, "notify"))
	var s service
	if err := s.activate(&serveRemoteOpts{}); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.log, s.dirs = hclog.NewNullLogger(), []string{goodDir}
	remote := &controlplane.RemoteConfig{}
	ctx, cancel := context.WithCancel(context.Background())
	release := s.reloadOnHUP(ctx, remote, s.log)
	defer func() { cancel(); release() }()

	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if m := rcv.next(t); !strings.HasPrefix(m, "RELOADING=1\nMONOTONIC_USEC=") {
		t.Fatalf("after SIGHUP %q", m)
	}
	select {
	case <-remote.Reload:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon was not asked to reload")
	}
	select {
	case m := <-rcv.msgs:
		t.Fatalf("%q before the reload ended", m)
	case <-time.After(200 * time.Millisecond):
	}
	remote.OnReload(nil)
	if m := rcv.next(t); m != "READY=1\nSTATUS=serving 2 adapters from "+goodDir {
		t.Fatalf("after the reload %q", m)
	}
}
