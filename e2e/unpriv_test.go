//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The process-tree proofs hold for an ordinary user. Run as root, this file
// re-executes the e2e test binary as nobody (with prebuilt helper programs, since
// nobody may not use root's build cache) on the tests that prove the end of trees, and
// runs adapterctl as nobody. The unprivileged run requires the mechanisms named in
// wantMechEnv, so that a silent fallback to the process group fails it instead of
// passing as "honestly unverified".

const (
	// wantMechEnv lists mechanisms ("userns|pidns") every supervised tree must have.
	wantMechEnv = "ADAPTERKIT_E2E_WANT_MECHANISM"
	nobodyID    = 65534
)

// checkWantedMechanism fails t when the run requires mechanisms that mech lacks.
func checkWantedMechanism(t testing.TB, mech string) {
	t.Helper()
	want := os.Getenv(wantMechEnv)
	if want == "" {
		return
	}
	have := strings.Split(mech, "|")
	for _, w := range strings.Split(want, "|") {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			t.Fatalf("supervised by %s, but this run requires %s", mech, want)
		}
	}
}

// asNobody makes cmd run as nobody.
func asNobody(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID}}
	return cmd
}

// nobodyBins builds the helper programs and makes them, and a copy of this test
// binary, usable by nobody; it returns the copy's path. It skips unless run as root.
func nobodyBins(t *testing.T, names ...string) string {
	t.Helper()
	if os.Getenv(wantMechEnv) != "" {
		t.Skip("this is the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skip("runs the proofs as nobody, which needs root to switch to; run as an ordinary user, the other tests of this package are that run")
	}
	// platform.TestUserNamespaceSysctlDisabled sets user.max_user_namespaces to 0 for
	// a moment, holding this lock exclusively; hold it shared while nobody runs.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "adapterkit-userns.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		buildBinT(t, n)
	}
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(binDir, "e2e.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// As nobody, adapterctl calls the example echo and exits 0 with the tree
// verified gone; inspect names the namespace mechanism and the dropped cgroup with
// its reason. The unprivileged e2e run (TestUnprivilegedProofs) depends on what this
// finds, so it comes first.
func TestUnprivilegedAdapterctl(t *testing.T) {
	nobodyBins(t, "examples/echo", "cmd/adapterctl")
	ctl, echo := buildBinT(t, "cmd/adapterctl"), buildBinT(t, "examples/echo")

	cmd := asNobody(exec.Command(ctl, "inspect", "--json", echo))
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("adapterctl inspect as nobody: %v: %s", err, out)
	}
	var ins struct {
		Supervision string `json:"supervision"`
		Dropped     []struct {
			Mechanism string `json:"mechanism"`
			Reason    string `json:"reason"`
		} `json:"dropped"`
		CleanupVerified bool `json:"cleanup_verified"`
	}
	if err := json.Unmarshal(out, &ins); err != nil {
		t.Fatalf("inspect --json said %s: %v", out, err)
	}
	t.Logf("inspect as nobody: supervision %s, dropped %+v", ins.Supervision, ins.Dropped)
	if !strings.Contains(ins.Supervision, "userns") {
		t.Skipf("no user namespace for nobody on this machine: %+v", ins.Dropped)
	}
	if ins.Supervision != "userns|pidns|pgroup|pdeathsig" && ins.Supervision != "cgroup|userns|pidns|pgroup|pdeathsig" {
		t.Fatalf("supervision %q", ins.Supervision)
	}
	if !ins.CleanupVerified {
		t.Fatal("cleanup not verified")
	}
	for _, d := range ins.Dropped {
		if d.Reason == "" {
			t.Fatalf("dropped %s without a reason", d.Mechanism)
		}
	}

	cmd = asNobody(exec.Command(ctl, "inspect", echo))
	cmd.Env = []string{}
	if out, err = cmd.Output(); err != nil || !regexp.MustCompile(`(?m)^supervision +userns\|pidns`).Match(out) &&
		!regexp.MustCompile(`(?m)^supervision +cgroup\|userns\|pidns`).Match(out) {
		t.Fatalf("inspect as nobody: %v\n%s", err, out)
	}

	cmd = asNobody(exec.Command(ctl, "call", echo, "example.echo.echo", `{"token":"nobody"}`))
	cmd.Env = []string{}
	out, err = cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != `{"token":"nobody"}` {
		t.Fatalf("adapterctl call as nobody: %v: %s", err, out)
	}
}

// R63, R64: the process-tree proofs of this package, run by nobody: normal
// close of adapters with a grandchild, a double-forked setsid daemon and a fork chain
// (verified, nothing left), a host SIGKILLed idle and mid-call (nothing left), and 200
// open/close cycles without leaks; every tree under a user and PID namespace.
func TestUnprivilegedProofs(t *testing.T) {
	exe := nobodyBins(t, "misbehave", "testhost", "examples/echo", "cmd/adapterctl")
	// Only where nobody gets a user namespace (TestUnprivilegedAdapterctl says why not).
	probe := asNobody(exec.Command(buildBinT(t, "cmd/adapterctl"), "inspect", "--json", buildBinT(t, "examples/echo")))
	probe.Env = []string{}
	if out, err := probe.Output(); err != nil || !strings.Contains(string(out), `"supervision": "userns|pidns`) &&
		!strings.Contains(string(out), `"supervision": "cgroup|userns|pidns`) {
		t.Skipf("nobody gets no user namespace here: %v %s", err, out)
	}
	tests := []string{"TestCloseEndsWholeTree", "TestHostSIGKILLed", "TestOpenCloseCycles"}
	cmd := asNobody(exec.Command(exe, "-test.run", "^("+strings.Join(tests, "|")+")$",
		"-test.count=1", "-test.v", "-test.timeout=15m"))
	cmd.Env = []string{prebuiltEnv + "=" + binDir, wantMechEnv + "=userns|pidns",
		"TMPDIR=" + os.TempDir(), "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = binDir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("e2e as nobody: %v\n%s", err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody", name)
		}
	}
	if strings.Contains(string(out), "--- SKIP") || strings.Contains(string(out), "--- FAIL") {
		t.Errorf("skips or failures in the unprivileged run")
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "mechanism") || strings.Contains(line, "---") {
			t.Log(strings.TrimSpace(line))
		}
	}
	t.Logf("unprivileged run took %v", time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
