//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// containWorld is what the hostile adapter attacks (e2e/cmd/hostile): a file outside
// its grants it tries to make set-user-ID, re-own, re-time and tag; a directory it may
// write, where it tries to create set-user-ID files; a pathname datagram socket and a
// UDP socket it tries to reach; a System V shared memory segment of this process it
// tries to write into; and, through a "#!/usr/bin/env HOME/bin/hostile" script,
// a home directory it tries to read. Its host is adapterctl (call, serve, check) or this
// test process (lifecycle, registry).
type containWorld struct {
	ctl, adapters      string // adapterctl; the directory of hostile_v1.0.0 and hostileenv_v1.0.0
	hostile, script    string
	allowed, outside   string
	victim, homeSecret string
	dgramPath, udpAddr string
	dgram              *net.UnixConn
	udp                *net.UDPConn
	daemonSock         string
	shmID              int
	shm                []byte // this process's attachment of segment shmID
}

// containPort is the TCP port the sandboxes grant connections to: with it granted a TCP
// socket can be created, which is what listen without bind needs.
const containPort = 9

func copyExec(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func newContainWorld(t *testing.T) *containWorld {
	t.Helper()
	w := &containWorld{ctl: buildBinT(t, "cmd/adapterctl"), adapters: t.TempDir(), allowed: t.TempDir(), outside: t.TempDir()}
	w.hostile = filepath.Join(w.adapters, "hostile_v1.0.0")
	copyExec(t, buildBinT(t, "hostile"), w.hostile)
	w.victim = filepath.Join(w.outside, "victim")
	copyExec(t, "/usr/bin/id", w.victim)

	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.homeSecret = filepath.Join(home, "secret")
	if err := os.WriteFile(w.homeSecret, []byte("the user's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyExec(t, w.hostile, filepath.Join(home, "bin", "hostile"))
	w.script = filepath.Join(w.adapters, "hostileenv_v1.0.0")
	if err := os.WriteFile(w.script, []byte("#!/usr/bin/env "+filepath.Join(home, "bin", "hostile")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	w.dgramPath = filepath.Join(w.outside, "d.sock")
	var err error
	if w.dgram, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: w.dgramPath, Net: "unixgram"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.dgram.Close() })
	if w.udp, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.udp.Close() })
	w.udpAddr = w.udp.LocalAddr().String()
	if w.shmID, err = unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(w.shmID, unix.IPC_RMID, nil) })
	if w.shm, err = unix.SysvShmAttach(w.shmID, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.SysvShmDetach(w.shm) })
	w.startDaemon(t)
	return w
}

// startDaemon serves both adapters under a policy file granting what --sandbox's flags
// grant in the other runs.
func (w *containWorld) startDaemon(t *testing.T) {
	t.Helper()
	policy := filepath.Join(t.TempDir(), "policy")
	grant := "allow-write " + w.allowed + "\nallow-net " + strconv.Itoa(containPort) + "\n"
	if err := os.WriteFile(policy, []byte("adapter hostile\n"+grant+"adapter hostileenv\n"+grant), 0o644); err != nil {
		t.Fatal(err)
	}
	w.daemonSock = filepath.Join(t.TempDir(), "d.sock")
	d := exec.Command(w.ctl, "serve", "--socket", w.daemonSock, "--policy", policy, w.adapters)
	d.Env = []string{}
	out, err := d.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Process.Signal(syscall.SIGTERM); _ = d.Wait() })
	buf := make([]byte, 4096)
	if n, err := out.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "serving") {
		t.Fatalf("serve did not become ready: %q %v", buf[:n], err)
	}
}

// sandbox is the policy of every sandboxed run.
func (w *containWorld) sandbox() *platform.Sandbox {
	return &platform.Sandbox{Write: []string{w.allowed}, ConnectPorts: []uint16{containPort}}
}

func (w *containWorld) grantFlags() []string {
	return []string{"--sandbox", "--allow-write", w.allowed, "--allow-net", strconv.Itoa(containPort)}
}

// hostRun is the answer of one run: the adapter's result, or how its host ended.
type hostRun struct {
	result []byte
	err    error
}

// killedBy reports whether the run's host (adapterctl) was ended by sig.
func (r hostRun) killedBy(sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func (w *containWorld) adapterctl(t *testing.T, args ...string) hostRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.ctl, args...)
	cmd.Env = []string{}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		t.Logf("adapterctl %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
	}
	return hostRun{out, err}
}

// call runs test.hostile.try through adapterctl call, sandboxed or not.
func (w *containWorld) call(t *testing.T, adapter string, attempts []hostileAttempt, sandboxed bool) hostRun {
	args := []string{"call"}
	if sandboxed {
		args = append(args, w.grantFlags()...)
	}
	return w.adapterctl(t, append(args, adapter, "test.hostile.try", hostileParams(t, attempts))...)
}

// served runs it through the daemon, which starts the adapter NAME under its policy.
func (w *containWorld) served(t *testing.T, name string, attempts []hostileAttempt) hostRun {
	return w.adapterctl(t, "call", "--socket", w.daemonSock, name, "test.hostile.try", hostileParams(t, attempts))
}

// check runs adapterctl check, which never calls the adapter's methods: the adapter
// makes its attempts as it starts (HOSTILE_ATTEMPTS) and reports them in a file of its
// write grant. check's own verdict on the adapter is not the point.
func (w *containWorld) check(t *testing.T, adapter string, attempts []hostileAttempt, sandboxed bool) hostRun {
	report := filepath.Join(w.allowed, "report.json")
	_ = os.Remove(report)
	args := []string{"check", "--json", "--env", "HOSTILE_ATTEMPTS=" + hostileParams(t, attempts), "--env", "HOSTILE_REPORT=" + report}
	if sandboxed {
		args = append(args, w.grantFlags()...)
	}
	r := w.adapterctl(t, append(args, adapter)...)
	if r.killedBy(syscall.SIGKILL) || r.killedBy(syscall.SIGSTOP) {
		return r
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return hostRun{nil, errors.Join(r.err, err)}
	}
	return hostRun{b, nil}
}

// direct runs it through lifecycle in this process, with the isolation given.
func (w *containWorld) direct(t *testing.T, adapter string, attempts []hostileAttempt, sb *platform.Sandbox, iso platform.Isolation) hostRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := lifecycle.Open(ctx, lifecycle.Config{Path: adapter, Isolation: iso, Sandbox: sb})
	if err != nil {
		return hostRun{nil, err}
	}
	res, err := a.Call(ctx, "test.hostile.try", json.RawMessage(hostileParams(t, attempts)))
	if sb != nil && !a.Supervision().Mechanism.Has(platform.MechLandlock|platform.MechSeccomp) {
		t.Errorf("sandboxed, but supervised by %s", a.Supervision())
	}
	_ = a.Close() // in a process group only, Close reports the end unverified
	return hostRun{res, err}
}

// registered runs it through a registry that discovers the adapter NAME.
func (w *containWorld) registered(t *testing.T, name string, attempts []hostileAttempt, sb *platform.Sandbox) hostRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := registry.New(&registry.Config{Dirs: []string{w.adapters}, Sandbox: sb})
	defer func() { _ = reg.Close(ctx) }()
	h, err := reg.Open(ctx, name, nil)
	if err != nil {
		return hostRun{nil, err}
	}
	res, err := h.Call(ctx, "test.hostile.try", json.RawMessage(hostileParams(t, attempts)))
	_ = h.Close()
	return hostRun{res, err}
}

// expect checks a run's outcomes: under a sandbox each attempt refused with one of the
// "|"-separated messages of its refused field, without one each attempt succeeded.
func expect(t *testing.T, how string, r hostRun, attempts []hostileAttempt, sandboxed bool) {
	t.Helper()
	if r.err != nil {
		t.Errorf("%s: the run failed: %v (%s)", how, r.err, r.result)
		return
	}
	var res struct {
		Outcomes []struct {
			OK            bool
			Error, Detail string
		} `json:"outcomes"`
	}
	if err := json.Unmarshal(r.result, &res); err != nil || len(res.Outcomes) != len(attempts) {
		t.Errorf("%s: result %s: %v", how, r.result, err)
		return
	}
	for i, a := range attempts {
		o := res.Outcomes[i]
		if !sandboxed {
			if !o.OK {
				t.Errorf("%s (control): %s %s failed: %s", how, a.Op, a.Arg, o.Error)
			} else if o.Detail != "" {
				t.Logf("%s (control): %s %s: %s", how, a.Op, a.Arg, o.Detail)
			}
			continue
		}
		matched := false
		for _, want := range strings.Split(a.refused, "|") {
			matched = matched || strings.Contains(o.Error, want)
		}
		if o.OK || !matched {
			t.Errorf("%s: %s %s: ok=%v %q %q, want refused with %q", how, a.Op, a.Arg, o.OK, o.Error, o.Detail, a.refused)
		}
	}
}
