package platform

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Sweep removes only what dead hosts left, and so must name a host the way /proc (which
// Sweep reads) names it. A host in a PID namespace of its own whose /proc is the
// outer one (a container sharing the host's /proc, a nested adapterkit host) sees a
// getpid() that /proc gives to another process: its cgroups must still carry its own
// identity, so that Sweep neither keeps them forever nor mistakes it for dead.
func TestSweepHostInPidNamespace(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	parent := privateParent(t, "") // see TestHostSIGKILLed: no other host sweeps it
	pidfile := filepath.Join(t.TempDir(), "pids")
	host := helperCmd("host", pidfile, strconv.Itoa(int(IsolationNoPIDNamespace)))
	host.Env = []string{"GORACE=atexit_sleep_ms=0"}
	host.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	started := inCgroup(t, host, parent)
	err = host.Start()
	started()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = host.Process.Kill()
		_ = host.Wait()
	}()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("host said %q, %v", line, err)
	}
	pids, err := readPidFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(killLater(pids))
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pids["adapter"]) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			name = filepath.Base(p)
		}
	}
	hostPid, start, ok := parseCgroupName(name)
	if !ok {
		t.Fatalf("adapter's cgroup %q is not a per-adapter cgroup", name)
	}
	if hostPid != host.Process.Pid || !sameProcess(hostPid, start) {
		t.Errorf("cgroup %s names host %d (running: %v); the host is %d", name, hostPid, sameProcess(hostPid, start), host.Process.Pid)
	}
	_ = host.Process.Kill()
	_ = host.Wait()
	rep := sweepFrom(t, parent)
	if len(rep.Failed) > 0 {
		t.Errorf("sweep failed: %+v", rep.Failed)
	}
	if !slices.ContainsFunc(rep.Swept, func(it SweptItem) bool { return filepath.Base(it.Path) == name }) {
		t.Errorf("Sweep did not remove %s of the dead host: %+v", name, rep)
	}
}
