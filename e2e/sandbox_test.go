//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
)

// hostileOutcome is one entry of test.hostile.try's result (e2e/cmd/hostile).
type hostileOutcome struct {
	Op    string `json:"op"`
	Arg   string `json:"arg"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// hostileAttempt is one attempt and the error a sandbox must give it ("" allowed).
type hostileAttempt struct {
	Op, Arg string
	refused string
}

// sandboxWorld is what the hostile adapter is pointed at: a directory it is granted, a
// file and a directory it is not, a TCP port it may connect to and one it may not, a
// running daemon whose control socket it tries, a process outside its tree.
type sandboxWorld struct {
	allowed, outsideDir, secret string
	okPort                      uint16
	okAddr, otherAddr           string
	daemonSock                  string
	outsider                    int
	hostile                     string // the adapter, as hostile_v1.0.0 in its own directory
	ctl                         string
	trueBin                     string // /bin/true as a policy names it: no symbolic link on the way
}

func listenTCP(t *testing.T) (string, uint16) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String(), uint16(l.Addr().(*net.TCPAddr).Port)
}

func newSandboxWorld(t *testing.T) *sandboxWorld {
	t.Helper()
	w := &sandboxWorld{allowed: t.TempDir(), outsideDir: t.TempDir(), ctl: buildBinT(t, "cmd/adapterctl")}
	w.secret = filepath.Join(w.outsideDir, "secret")
	var err error
	if w.trueBin, err = filepath.EvalSymlinks("/bin/true"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.secret, []byte("not for adapters"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.okAddr, w.okPort = listenTCP(t)
	w.otherAddr, _ = listenTCP(t)
	adapters := t.TempDir()
	w.hostile = filepath.Join(adapters, "hostile_v1.0.0")
	b, err := os.ReadFile(buildBinT(t, "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.hostile, b, 0o755); err != nil {
		t.Fatal(err)
	}
	outsider := exec.Command("/bin/sleep", "600")
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = outsider.Process.Kill(); _ = outsider.Wait() })
	w.outsider = outsider.Process.Pid

	// The daemon serves the hostile adapter under a policy file: its sandbox there is
	// the same as --sandbox with the grants below.
	policy := filepath.Join(t.TempDir(), "policy")
	text := "adapter hostile\nallow-write " + w.allowed + "\nallow-net " + strconv.Itoa(int(w.okPort)) + "\nallow-exec " + w.trueBin + "\n"
	if err := os.WriteFile(policy, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	w.daemonSock = filepath.Join(t.TempDir(), "d.sock")
	d := exec.Command(w.ctl, "serve", "--socket", w.daemonSock, "--policy", policy, adapters)
	d.Env = []string{}
	out, err := d.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Process.Signal(syscall.SIGTERM); _ = d.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, "serving") {
		t.Fatalf("serve did not become ready: %q %v", line, err)
	}
	return w
}

// attempts are what the hostile adapter tries; withProcs adds the signal and ptrace
// attempts on the outside process, which only a host without a PID namespace lets the
// adapter name (a PID namespace already hides it: there the control could not succeed).
func (w *sandboxWorld) attempts(withProcs bool) []hostileAttempt {
	a := []hostileAttempt{
		{"read", w.secret, "permission denied"},
		{"write", w.outsideDir, "permission denied"},
		{"write", w.allowed, ""},
		{"read", filepath.Join(w.allowed, "hostile-probe"), ""},
		{"connect", w.okAddr, ""},
		{"connect", w.otherAddr, "connect: permission denied"},
		{"bind", "127.0.0.1:0", "bind: permission denied"},
		{"unix", w.daemonSock, "socket: operation not permitted"},
		{"exec", "/bin/sh", "permission denied"},
		{"exec", "/bin/true", ""},
	}
	if withProcs {
		a = append(a, hostileAttempt{"signal", strconv.Itoa(w.outsider), "operation not permitted"},
			hostileAttempt{"ptrace", strconv.Itoa(w.outsider), "operation not permitted"})
	}
	return a
}

func hostileParams(t *testing.T, attempts []hostileAttempt) string {
	t.Helper()
	type at struct {
		Op  string `json:"op"`
		Arg string `json:"arg"`
	}
	var p struct {
		Attempts []at `json:"attempts"`
	}
	for _, a := range attempts {
		p.Attempts = append(p.Attempts, at{a.Op, a.Arg})
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkOutcomes compares the adapter's report with what the sandbox (or, for the
// control, no sandbox) must give each attempt.
func checkOutcomes(t *testing.T, how string, result []byte, attempts []hostileAttempt, sandboxed bool) {
	t.Helper()
	var r struct {
		Outcomes []hostileOutcome `json:"outcomes"`
	}
	if err := json.Unmarshal(result, &r); err != nil || len(r.Outcomes) != len(attempts) {
		t.Fatalf("%s: result %s: %v", how, result, err)
	}
	for i, a := range attempts {
		o := r.Outcomes[i]
		switch {
		case !sandboxed && !o.OK:
			t.Errorf("%s (control): %s %s failed: %s", how, a.Op, a.Arg, o.Error)
		case sandboxed && a.refused == "" && !o.OK:
			t.Errorf("%s: granted %s %s failed: %s", how, a.Op, a.Arg, o.Error)
		case sandboxed && a.refused != "" && (o.OK || !strings.Contains(o.Error, a.refused)):
			t.Errorf("%s: %s %s: ok=%v %q, want refused with %q", how, a.Op, a.Arg, o.OK, o.Error, a.refused)
		}
	}
	if sandboxed && !t.Failed() {
		t.Logf("%s: %d attempts, each refused by the kernel or granted as the policy says", how, len(attempts))
	}
}

// The hostile adapter under a sandbox with one writable directory, one TCP port and one
// program: each escape is refused by the kernel, each grant works; without the sandbox
// every attempt succeeds. Through adapterctl call --sandbox, through a daemon's --policy
// (the adapter tries that daemon's own control socket), and through lifecycle in a
// process group only, where the outside process is nameable, for signal and ptrace.
func TestSandboxHostileAdapter(t *testing.T) {
	w := newSandboxWorld(t)
	local := w.attempts(false)
	params := hostileParams(t, local)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(w.ctl, args...)
		cmd.Env = []string{}
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("adapterctl %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	grants := []string{"--sandbox", "--allow-write", w.allowed, "--allow-net", strconv.Itoa(int(w.okPort)), "--allow-exec", w.trueBin}
	out := run(append(append([]string{"call"}, grants...), w.hostile, "test.hostile.try", params)...)
	checkOutcomes(t, "adapterctl call --sandbox", out, local, true)
	out = run("call", "--socket", w.daemonSock, "hostile", "test.hostile.try", params)
	checkOutcomes(t, "adapterctl serve --policy", out, local, true)
	var st struct {
		Adapters []struct {
			Name, Mechanism, Sandbox string
		} `json:"adapters"`
	}
	if err := json.Unmarshal(run("status", "--socket", w.daemonSock, "--json"), &st); err != nil ||
		len(st.Adapters) != 1 || !strings.Contains(st.Adapters[0].Mechanism, "landlock|seccomp") ||
		!strings.Contains(st.Adapters[0].Sandbox, "net tcp connect "+strconv.Itoa(int(w.okPort))) {
		t.Errorf("daemon status: %+v %v", st, err)
	}
	out = run("call", w.hostile, "test.hostile.try", params)
	checkOutcomes(t, "adapterctl call", out, local, false)

	procs := w.attempts(true)
	params = hostileParams(t, procs)
	sb := &platform.Sandbox{Write: []string{w.allowed}, ConnectPorts: []uint16{w.okPort}, Exec: []string{w.trueBin}}
	for _, sandboxed := range []bool{true, false} {
		cfg := lifecycle.Config{Path: w.hostile, Isolation: platform.IsolationProcessGroup}
		if sandboxed {
			cfg.Sandbox = sb
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		a, err := lifecycle.Open(ctx, cfg)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		res, err := a.Call(ctx, "test.hostile.try", json.RawMessage(params))
		cancel()
		sup := a.Supervision()
		_ = a.Close() // a process group proves nothing: Close reports it unverified
		if err != nil {
			t.Fatal(err)
		}
		if sandboxed != sup.Mechanism.Has(platform.MechLandlock|platform.MechSeccomp) {
			t.Errorf("sandboxed %v, supervision %s", sandboxed, sup)
		}
		checkOutcomes(t, "lifecycle, process group", res, procs, sandboxed)
	}
}

// The same as nobody: the sandbox needs no privilege.
func TestSandboxHostileAdapterAsNobody(t *testing.T) {
	exe := nobodyBins(t, "hostile", "cmd/adapterctl")
	cmd := asNobody(exec.Command(exe, "-test.run", "^TestSandboxHostileAdapter$", "-test.count=1", "-test.v", "-test.timeout=5m"))
	cmd.Env = []string{prebuiltEnv + "=" + binDir, "TMPDIR=" + os.TempDir(), "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = binDir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSandboxHostileAdapter ") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "attempts") {
			t.Log(strings.TrimSpace(line))
		}
	}
}
