//go:build linux

package controlplane

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// daemonProc is the test binary re-executed as a daemon (daemonMain).
type daemonProc struct {
	cmd  *exec.Cmd
	done chan error
}

func startDaemon(t *testing.T, sock, dir string) *daemonProc {
	t.Helper()
	return startDaemonIn(t, sock, dir, "")
}

// startDaemonIn starts the daemon in the cgroup v2 directory cg ("" for the test's own).
func startDaemonIn(t *testing.T, sock, dir, cg string) *daemonProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=daemon", socketEnv+"="+sock, dirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	started := testkit.InCgroup(t, cmd, cg)
	err = cmd.Start()
	started()
	if err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, done: make(chan error, 1)}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ready <- sc.Scan() && sc.Text() == "ready"
		for sc.Scan() {
		}
		d.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		d.wait(t)
	})
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("daemon did not start: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon not ready within 30 s")
	}
	return d
}

// wait returns the daemon's exit error (nil for status 0), once.
func (d *daemonProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err, ok := <-d.done:
		if !ok {
			return nil
		}
		close(d.done)
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not exit within 30 s")
		return nil
	}
}

func running(pid int) bool { return testkit.Running(pid) }

func waitGone(t *testing.T, pids ...int) { t.Helper(); testkit.WaitGone(t, 15*time.Second, pids...) }

// openAdapters makes the daemon open both adapters and returns their pids and
// mechanisms.
func openAdapters(t *testing.T, sock string) ([]int, []string) {
	t.Helper()
	c := dial(t, sock)
	ctx := testCtx(t)
	if _, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, SendParams{Adapter: "thermometer", Method: "example.device.read", Params: []byte(`{"probe":"inlet"}`)}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Adapters) != 2 {
		t.Fatalf("adapters %+v", st.Adapters)
	}
	var pids []int
	var mechs []string
	for _, a := range st.Adapters {
		if !running(a.PID) {
			t.Fatalf("adapter %s pid %d not running", a.Name, a.PID)
		}
		pids = append(pids, a.PID)
		mechs = append(mechs, a.Mechanism)
	}
	_ = c.Close()
	return pids, mechs
}

// TestDaemonSIGTERM (R47, R48, R63): the daemon's main cancels Serve's context on SIGTERM; Serve
// answers the request under way, closes every adapter verified (exit status 0 says
// Serve returned nil) and removes the socket.
func TestDaemonSIGTERM(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")
	sock := socketPath(t)
	d := startDaemon(t, sock, dir)
	pids, _ := openAdapters(t, sock)
	c := dial(t, sock)
	inflight := make(chan error, 1)
	go func() {
		_, err := c.Send(context.Background(), SendParams{Adapter: "echo", Method: "example.echo.sleep", Params: []byte(`{"ms":25000}`)})
		inflight <- err
	}()
	waitStatus(t, dial(t, sock), func(st *StatusResult) bool { return st.InFlight == 1 })
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.wait(t); err != nil {
		t.Fatalf("daemon exited with %v after SIGTERM, want status 0 (every adapter verified gone)", err)
	}
	// The call under way was answered (cancelled at the adapter), not left hanging.
	err := <-inflight
	wantCode(t, err, CodeTransportError)
	testkit.Gone(t, pids...) // verified: gone when the daemon exited, no grace

	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after shutdown: %v", err)
	}
}

// TestDaemonSIGKILL (R64): a daemon killed outright leaves no adapter running (each dies
// with its host: parent-death signal, PID namespace), and the next daemon on the
// same socket replaces the stale socket and sweeps the leftovers' cgroups.
//
// Every host of a machine sweeps the cgroups under its own cgroup, so both daemons run
// in a private cgroup (as root): no other host — another test package, an
// `adapterctl serve` nearby — sweeps there, and the second daemon's report is its own.
func TestDaemonSIGKILL(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")
	sock := socketPath(t)
	cg := testkit.PrivateCgroup(t)
	d := startDaemonIn(t, sock, dir, cg)
	pids, mechs := openAdapters(t, sock)
	var cgroups []string
	for i, m := range mechs {
		if !strings.Contains(m, "cgroup") {
			if cg != "" {
				t.Fatalf("as root in a writable cgroup, adapter %d ran with %s: want a cgroup", pids[i], m)
			}
			continue
		}
		p, err := testkit.CgroupOf(pids[i])
		if err != nil {
			t.Fatal(err)
		}
		cgroups = append(cgroups, p)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.wait(t)
	waitGone(t, pids...)

	d2 := startDaemonIn(t, sock, dir, cg)
	st, err := dial(t, sock).Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range st.Sweep.Swept {
		if it.HostPID == d.cmd.Process.Pid {
			n++
		}
	}
	if n != len(cgroups) || len(st.Sweep.Failed) != 0 {
		t.Errorf("sweep %+v: want %d cgroups of host %d swept", st.Sweep, len(cgroups), d.cmd.Process.Pid)
	}
	for _, p := range cgroups {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dead daemon's adapter cgroup %s is still there (%v)", p, err)
		}
	}
	if st.Health != healthOK {
		t.Errorf("health %s after the sweep", st.Health)
	}
	if err := d2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d2.wait(t); err != nil {
		t.Fatalf("second daemon exited with %v", err)
	}
}

// TestClientKilledMidDiscover: a client process killed while its Discover streams
// costs the daemon nothing: its connection is cleaned up and others are served.
func TestClientKilledMidDiscover(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
	c := dial(t, sock)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=discover-client", socketEnv+"="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "found ") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("client printed %q, want a found event", sc.Text())
	}
	waitStatus(t, c, func(st *StatusResult) bool { return st.Clients == 2 })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitStatus(t, c, func(st *StatusResult) bool { return st.Clients == 1 })
	if _, err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// The in-process daemon's goroutines for that client are gone too: goleak checks
	// at the end of the test binary.
}
