//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/platform"
)

// The containment proofs against an adapter written to escape (e2e/cmd/hostile): each
// attack is refused by the kernel under a sandbox, through every way a host starts one
// (adapterctl call --sandbox, a daemon's --policy, adapterctl check --sandbox, lifecycle
// with each isolation, registry), and the same attack without a sandbox succeeds (the
// control), so that a refusal is the sandbox's and not the attack's own failure.
// TestContainAsNobody runs them all again as an ordinary user.

// containIsolations are the ways lifecycle contains the tree: a PID namespace hides the host,
// the others let the adapter name it; without user namespaces (a host where they are
// refused) a root host still gets a PID namespace, an ordinary user none.
var containIsolations = []struct {
	name string
	iso  platform.Isolation
}{
	{"auto", platform.IsolationAuto},
	{"no PID namespace", platform.IsolationNoPIDNamespace},
	{"process group", platform.IsolationProcessGroup},
	{"no user namespace", platform.IsolationNoUserNamespace},
}

const refusedEPERM = "operation not permitted"

// fileNetAttempts are the attacks on files and the network: mode, owner, time and
// attribute changes outside the grants, set-user-ID files inside them, listen without
// bind, a datagram pair to a pathname socket, UDP, a child in a user namespace of its
// own, a child of the host outside the adapter's tree, this process's System V shared
// memory.
func (w *containWorld) fileNetAttempts() []hostileAttempt {
	return []hostileAttempt{
		{"chown", w.victim, refusedEPERM}, // before chmod-suid: a chown clears set-id bits
		{"utimes", w.victim, refusedEPERM},
		{"setxattr", w.victim, refusedEPERM},
		{"chmod-suid", w.victim, refusedEPERM},
		{"create-suid", w.allowed, refusedEPERM},
		{"copy-suid", w.allowed, refusedEPERM},
		{"mknod-suid", w.allowed, refusedEPERM},
		{"listen", "", "listen: " + refusedEPERM},
		{"dgram", w.dgramPath, refusedEPERM},
		{"udp", w.udpAddr, "socket: " + refusedEPERM},
		{"userns", "", "clone(CLONE_NEWUSER): " + refusedEPERM},
		{"clone-parent", "", "clone(CLONE_PARENT): " + refusedEPERM},
		{"shm", strconv.Itoa(w.shmID), "shmat: " + refusedEPERM},
	}
}

// received reports whether a datagram waits on the socket, and drains it.
func received(t *testing.T, c interface {
	SetReadDeadline(time.Time) error
	Read([]byte) (int, error)
}) bool {
	t.Helper()
	got := false
	buf := make([]byte, 256)
	for {
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			return got
		}
		got = got || string(buf[:n]) == "hostile datagram"
	}
}

// after checks that the world shows each attack landed (control) or none (sandboxed),
// then restores it for the next run.
func (w *containWorld) after(t *testing.T, how string, sandboxed bool) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(w.victim, &st); err != nil {
		t.Fatal(err)
	}
	if got := st.Mode&unix.S_ISUID != 0; got == sandboxed {
		t.Errorf("%s: victim mode %o", how, st.Mode&0o7777)
	}
	_, xerr := unix.Getxattr(w.victim, "user.hostile", nil)
	if got := xerr == nil; got == sandboxed {
		t.Errorf("%s: victim's user.hostile attribute present %v (%v)", how, got, xerr)
	}
	for _, name := range []string{"hostile-suid", "hostile-id", "hostile-node"} {
		p := filepath.Join(w.allowed, name)
		err := unix.Stat(p, &st)
		if setid := err == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0; setid == sandboxed {
			t.Errorf("%s: %s set-id %v (%v)", how, name, setid, err)
		}
		_ = os.Remove(p)
	}
	if got := received(t, w.dgram); got == sandboxed {
		t.Errorf("%s: datagram to %s received %v", how, w.dgramPath, got)
	}
	if got := received(t, w.udp); got == sandboxed {
		t.Errorf("%s: UDP datagram received %v", how, got)
	}
	if got := bytes.HasPrefix(w.shm, []byte("hostile shm")); got == sandboxed {
		t.Errorf("%s: shared memory segment written %v", how, got)
	}
	clear(w.shm)
	if err := os.Chmod(w.victim, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = unix.Removexattr(w.victim, "user.hostile")
}

// containRun is one way to run the attacks, and whether it is sandboxed.
type containRun struct {
	how       string
	sandboxed bool
	run       func() hostRun
}

// Attacks 1, 4 and 5: no mode, owner, time or attribute change and no set-user-ID
// file; no listening socket without bind; no datagram pair, no UDP.
func TestContainFilesAndSockets(t *testing.T) {
	w := newContainWorld(t)
	a := w.fileNetAttempts()
	sb := w.sandbox()
	runs := []containRun{
		{"adapterctl call --sandbox", true, func() hostRun { return w.call(t, w.hostile, a, true) }},
		{"adapterctl serve --policy", true, func() hostRun { return w.served(t, "hostile", a) }},
		{"adapterctl check --sandbox", true, func() hostRun { return w.check(t, w.hostile, a, true) }},
		{"registry", true, func() hostRun { return w.registered(t, "hostile", a, sb) }},
		{"adapterctl call", false, func() hostRun { return w.call(t, w.hostile, a, false) }},
		{"adapterctl check", false, func() hostRun { return w.check(t, w.hostile, a, false) }},
		{"registry", false, func() hostRun { return w.registered(t, "hostile", a, nil) }},
	}
	for _, is := range containIsolations {
		runs = append(runs,
			containRun{"lifecycle, " + is.name, true, func() hostRun { return w.direct(t, w.hostile, a, sb, is.iso) }},
			containRun{"lifecycle, " + is.name, false, func() hostRun { return w.direct(t, w.hostile, a, nil, is.iso) }})
	}
	for _, r := range runs {
		expect(t, r.how, r.run(), a, r.sandboxed)
		w.after(t, r.how, r.sandboxed)
	}
}

// Attack 2: no signal, prlimit, priority, affinity or I/O priority change reaches the
// host's threads. adapterctl is a host
// that may die: the adapter sends its parent SIGSTOP, then SIGKILL, to every thread
// it can find. This test process is the host of lifecycle and registry: there the
// adapter sends signal 0, which the kernel checks exactly as any other signal. A PID
// namespace hides the host ("unreachable"); without one the kernel must refuse.
func TestContainHostSignals(t *testing.T) {
	w := newContainWorld(t)
	const refusedSig = "reached none|unreachable"
	refusedLimit := refusedEPERM + "|unreachable"
	limits := []hostileAttempt{
		{"prlimit", "parent", refusedLimit},
		{"renice", "parent", refusedLimit},
		{"affinity", "parent", refusedLimit},
		{"ioprio", "parent", refusedLimit},
	}
	signals := []hostileAttempt{
		{"tgkill", "parent:" + strconv.Itoa(int(syscall.SIGSTOP)), refusedSig},
		{"tgkill", "parent:" + strconv.Itoa(int(syscall.SIGKILL)), refusedSig},
	}
	self := strconv.Itoa(os.Getpid())
	here := []hostileAttempt{
		{"prlimit", self, refusedLimit}, {"renice", self, refusedLimit}, {"affinity", self, refusedLimit},
		{"ioprio", self, refusedLimit}, {"tgkill", self + ":0", refusedSig},
	}
	for _, parent := range [][]hostileAttempt{limits, signals} { // a host killed by signals says nothing of limits
		expect(t, "adapterctl call --sandbox", w.call(t, w.hostile, parent, true), parent, true)
		expect(t, "adapterctl serve --policy", w.served(t, "hostile", parent), parent, true)
		expect(t, "adapterctl check --sandbox", w.check(t, w.hostile, parent, true), parent, true)
	}
	expect(t, "registry", w.registered(t, "hostile", here, w.sandbox()), here, true)
	for _, is := range containIsolations {
		expect(t, "lifecycle, "+is.name, w.direct(t, w.hostile, here, w.sandbox(), is.iso), here, true)
	}
	// In a process group a sandboxed adapter's parent is its reaper, which its proof of
	// the end rests on: the adapter can stop or kill it no more than this host.
	expect(t, "lifecycle, process group, its reaper", w.direct(t, w.hostile, signals, w.sandbox(), platform.IsolationProcessGroup), signals, true)

	// The controls: in a process group the adapter reaches this process; check starts
	// it without a PID namespace for one of its checks, where SIGKILL ends adapterctl.
	expect(t, "lifecycle, process group", w.direct(t, w.hostile, here, nil, platform.IsolationProcessGroup), here, false)
	kill := []hostileAttempt{{"tgkill", "parent:" + strconv.Itoa(int(syscall.SIGKILL)), ""}}
	if r := w.check(t, w.hostile, kill, false); !r.killedBy(syscall.SIGKILL) {
		t.Errorf("adapterctl check (control): the adapter's SIGKILL did not end its host: %v %s", r.err, r.result)
	}
}

// Attack 3: a "#!/usr/bin/env HOME/bin/hostile" line grants nothing under HOME. The
// sandbox may refuse to start such an adapter (its interpreter is no system one) or
// start it without HOME readable; either way the secret stays unread.
func TestContainInterpreterGrants(t *testing.T) {
	w := newContainWorld(t)
	a := []hostileAttempt{{"read", w.homeSecret, "permission denied"}}
	sb := w.sandbox()
	sandboxed := func(how string, r hostRun) {
		t.Helper()
		if r.err != nil { // the controls show the same adapter starts without a sandbox
			t.Logf("%s: the adapter did not start: %v", how, r.err)
			return
		}
		expect(t, how, r, a, true)
	}
	sandboxed("adapterctl call --sandbox", w.call(t, w.script, a, true))
	sandboxed("adapterctl serve --policy", w.served(t, "hostileenv", a))
	sandboxed("adapterctl check --sandbox", w.check(t, w.script, a, true))
	sandboxed("registry", w.registered(t, "hostileenv", a, sb))
	for _, is := range containIsolations {
		sandboxed("lifecycle, "+is.name, w.direct(t, w.script, a, sb, is.iso))
	}
	expect(t, "adapterctl call", w.call(t, w.script, a, false), a, false)
	expect(t, "lifecycle, process group", w.direct(t, w.script, a, nil, platform.IsolationProcessGroup), a, false)
}

// The same proofs as nobody: the sandbox needs no privilege, and the controls show
// what an ordinary user's adapter could do without it.
func TestContainAsNobody(t *testing.T) {
	exe := nobodyBins(t, "hostile", "cmd/adapterctl")
	cmd := asNobody(exec.Command(exe, "-test.run", "^TestContain(FilesAndSockets|HostSignals|InterpreterGrants)$", "-test.count=1", "-test.v", "-test.timeout=10m"))
	cmd.Env = []string{prebuiltEnv + "=" + binDir, "TMPDIR=" + os.TempDir(), "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = binDir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS: TestContain") != 3 {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
