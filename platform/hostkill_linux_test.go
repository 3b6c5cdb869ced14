package platform

import (
	"bufio"

	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// R64 and the design's promise: a host killed with SIGKILL leaves nothing running.
// The test re-executes itself as a host that starts a "tree" adapter (a grandchild in
// the group and a double-forked setsid daemon), then SIGKILLs that host. What each
// isolation achieves is asserted, so the test doubles as the measurement of which
// mechanism closes which case:
//   - auto (cgroup + PID namespace + pdeathsig): everything ends at once.
//   - no-pidns (cgroup + pdeathsig): the adapter ends (pdeathsig), its descendants stay
//     in the cgroup until Sweep, which ends them.
//   - pgroup (pdeathsig only): the adapter ends; its descendants survive (the limit the
//     package documents), and the test cleans them up.
//
// The host runs in a cgroup parent of the test's own (see privateParent), and a second
// host in that parent sweeps: other hosts of the machine sweep only their own parent,
// so what the test sees of the descendants and the sweep's report is its own.
func TestHostSIGKILLed(t *testing.T) {
	requireRoot(t)
	requireCgroup(t)
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			parent := privateParent(t, "")
			pidfile := filepath.Join(t.TempDir(), "pids")
			host := helperCmd("host", pidfile, strconv.Itoa(int(is.iso)))
			host.Env = []string{"GORACE=atexit_sleep_ms=0"}
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
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ready ") {
				_ = host.Process.Kill()
				_ = host.Wait()
				t.Fatalf("host said %q, %v", line, err)
			}
			t.Logf("host %d supervised its adapter with %s", host.Process.Pid, strings.TrimSpace(line[len("ready "):]))
			pids, err := readPidFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			delete(pids, "middle")
			delete(pids, "host")
			t.Cleanup(killLater(pids))

			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()

			switch is.iso {
			case IsolationAuto:
				waitGone(t, pids)
			case IsolationNoPIDNamespace:
				waitGone(t, map[string]int{"adapter": pids["adapter"]})
				for _, role := range []string{"sleeper", "daemon"} {
					if !pidAlive(pids[role]) {
						t.Fatalf("%s ended without a sweep: expected to stay in the cgroup", role)
					}
				}
				rep := sweepFrom(t, parent)
				if len(rep.Failed) > 0 {
					t.Errorf("sweep failed: %+v", rep.Failed)
				}
				i := slices.IndexFunc(rep.Swept, func(it SweptItem) bool { return it.HostPid == host.Process.Pid })
				if i < 0 {
					t.Fatalf("sweep did not find the dead host's cgroup: %+v", rep)
				}
				for _, role := range []string{"sleeper", "daemon"} {
					if !slices.Contains(rep.Swept[i].Pids, pids[role]) {
						t.Errorf("sweep report %v lacks %s %d", rep.Swept[i].Pids, role, pids[role])
					}
				}
				waitGone(t, pids)
			case IsolationProcessGroup:
				waitGone(t, map[string]int{"adapter": pids["adapter"]})
				for _, role := range []string{"sleeper", "daemon"} {
					if !pidAlive(pids[role]) {
						t.Fatalf("%s ended: the pgroup fallback was expected not to reach it", role)
					}
				}
			}
		})
	}
}
