package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Every host of a machine sweeps the same cgroup parent, so a test that asserts what
// its own Sweep call found races every other host on the machine (other test
// packages, an `adapterctl serve` nearby). Tests that check the report's contents
// sweep a private parent of their own instead: a directory under this process's
// cgroup whose name is not a per-adapter cgroup's, so no other sweeper looks inside.

// privateParent makes a cgroup directory (v2, or v1 when v1dir is set) that only this
// test sweeps, and removes it (and anything left in it) at cleanup.
func privateParent(t *testing.T, v1dir string) string {
	t.Helper()
	base := v1dir
	if base == "" {
		base = requireCgroup(t)
	}
	dir := filepath.Join(base, fmt.Sprintf("aktest-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Everything in it is the test's: end it all (the pgroup cases leave
		// descendants in the parent itself), then remove it, deepest first.
		cg := &cgroup{path: dir, v1: v1dir != ""}
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		_ = cg.kill()
		if err := cg.waitEmpty(ctx); err != nil {
			t.Errorf("the private cgroup parent did not empty: %v", err)
		}
		if err := cg.remove(); err != nil {
			t.Errorf("removing the private cgroup parent: %v", err)
		}
	})
	return dir
}

// deadHost returns the pid and start time of a host that ran and is gone.
func deadHost(t *testing.T) (int, uint64) {
	t.Helper()
	dead := helperCmd("env")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	start, _ := selfStart()
	return dead.Process.Pid, start
}

// orphanIn starts a "block" helper inside the cgroup dir (v2: born there; v1: moved
// there) and returns it; it blocks until killed.
func orphanIn(t *testing.T, dir string, v1 bool) *exec.Cmd {
	t.Helper()
	orphan := helperCmd("block")
	stdin, _ := orphan.StdinPipe() // stays open: the orphan blocks until killed
	t.Cleanup(func() { stdin.Close() })
	if !v1 {
		dirf, err := (&cgroup{path: dir}).openDir()
		if err != nil {
			t.Fatal(err)
		}
		defer dirf.Close()
		orphan.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dirf.Fd())}
	}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	if v1 {
		if err := writeExisting(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(orphan.Process.Pid)); err != nil {
			_ = orphan.Process.Kill()
			_ = orphan.Wait()
			t.Fatal(err)
		}
	}
	return orphan
}

// wantKilled asserts the orphan ended by a signal (the sweep's kill).
func wantKilled(t *testing.T, orphan *exec.Cmd) {
	t.Helper()
	err := orphan.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Errorf("orphan %d ended with %v, want killed", orphan.Process.Pid, err)
	}
}

// wantSweptAway asserts what a test owns after a sweep that may have raced other
// hosts' sweeps: none of paths is reported Failed, and each directory is gone.
func wantSweptAway(t *testing.T, rep SweepReport, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if i := slices.IndexFunc(rep.Failed, func(it SweptItem) bool { return it.Path == p }); i >= 0 {
			t.Errorf("sweep reported %s failed: %v", p, rep.Failed[i].Err)
		}
		if !cgroupGone(p) {
			t.Errorf("%s still exists after the sweep", p)
		}
	}
}

// Sweep removes a cgroup left by a dead host and kills what is in it, reports it with
// the dead host's pid and the processes found, and leaves the cgroups of live hosts
// alone. Run on a private parent, so the report is this sweep's alone.
func TestSweepDirReport(t *testing.T) {
	requireRoot(t)
	for _, v1 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v2", true: "v1"}[v1], func(t *testing.T) {
			v1dir := ""
			if v1 {
				v1dir = requireV1(t, "memory")
			}
			parent := privateParent(t, v1dir)
			deadPid, start := deadHost(t)
			leftover := filepath.Join(parent, fmt.Sprintf("%s%d-%d-1", cgroupPrefix, deadPid, start))
			reused := filepath.Join(parent, fmt.Sprintf("%s%d-%d-1", cgroupPrefix, os.Getpid(), start+1))
			live := filepath.Join(parent, fmt.Sprintf("%s%d-%d-999999", cgroupPrefix, os.Getpid(), start))
			for _, d := range []string{leftover, reused, live} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			orphan := orphanIn(t, leftover, v1)
			var rep SweepReport
			if err := sweepDir(ctxBound(t), hclog.NewNullLogger(), parent, v1, &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Failed) > 0 || len(rep.Swept) != 2 {
				t.Fatalf("report %+v: want exactly the leftover and the reused-pid cgroup swept", rep)
			}
			swept := map[string]SweptItem{}
			for _, it := range rep.Swept {
				swept[it.Path] = it
			}
			if it, ok := swept[leftover]; !ok || it.HostPid != deadPid || !slices.Equal(it.Pids, []int{orphan.Process.Pid}) {
				t.Errorf("leftover not reported as expected: %+v", rep)
			}
			if _, ok := swept[reused]; !ok {
				t.Errorf("cgroup of a reused host pid (other start time) not swept: %+v", rep)
			}
			wantKilled(t, orphan)
			wantSweptAway(t, rep, leftover, reused)
			if _, err := os.Stat(live); err != nil {
				t.Errorf("live host's cgroup removed: %v", err)
			}
		})
	}
}

// A leftover that another sweeper removed first is a success: its cgroup.kill,
// cgroup.events and directory are gone by the time this sweep reaches them.
func TestSweepOneAlreadyRemoved(t *testing.T) {
	parent := t.TempDir() // no cgroup needed: the directory does not exist at all
	for _, v1 := range []bool{false, true} {
		cg := &cgroup{path: filepath.Join(parent, cgroupPrefix+"1-1-1"), v1: v1}
		if err := sweepOne(ctxBound(t), cg); err != nil {
			t.Errorf("v1=%v: sweeping a cgroup someone else removed: %v", v1, err)
		}
	}
}

// Two hosts sweeping the same leftovers at once (two applications using adapterkit on
// one machine) must both come out clean: every leftover swept by one of them, none
// reported failed by either, so neither turns its health degraded.
func TestSweepRacingSweepers(t *testing.T) {
	requireRoot(t)
	parent := privateParent(t, "")
	deadPid, start := deadHost(t)
	const rounds, leftovers, sweepers = 8, 6, 4
	for round := range rounds {
		var paths []string
		var orphans []*exec.Cmd
		for i := range leftovers {
			p := filepath.Join(parent, fmt.Sprintf("%s%d-%d-%d", cgroupPrefix, deadPid, start, round*leftovers+i))
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
			orphans = append(orphans, orphanIn(t, p, false))
		}
		reps := make([]SweepReport, sweepers)
		errs := make([]error, sweepers)
		var wg sync.WaitGroup
		for s := range sweepers {
			wg.Go(func() { errs[s] = sweepDir(ctxBound(t), hclog.NewNullLogger(), parent, false, &reps[s]) })
		}
		wg.Wait()
		for s := range sweepers {
			if errs[s] != nil {
				t.Fatalf("round %d sweeper %d: %v", round, s, errs[s])
			}
			wantSweptAway(t, reps[s], paths...)
		}
		for _, p := range paths {
			if !slices.ContainsFunc(reps, func(r SweepReport) bool {
				return slices.ContainsFunc(r.Swept, func(it SweptItem) bool { return it.Path == p })
			}) {
				t.Errorf("round %d: %s swept by no sweeper", round, p)
			}
		}
		for _, o := range orphans {
			wantKilled(t, o)
		}
		if t.Failed() {
			return
		}
	}
}

// inCgroup makes cmd start inside the cgroup v2 directory dir (clone3
// CLONE_INTO_CGROUP); call the returned function once cmd started.
func inCgroup(t *testing.T, cmd *exec.Cmd, dir string) func() {
	t.Helper()
	dirf, err := (&cgroup{path: dir}).openDir()
	if err != nil {
		t.Fatal(err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(dirf.Fd())
	return func() { dirf.Close() }
}

// sweepFrom runs Sweep in a helper process living in the cgroup dir — a second host
// whose own cgroup is dir — and returns its report (Err carries the text only).
func sweepFrom(t *testing.T, dir string) SweepReport {
	t.Helper()
	cmd := helperCmd("sweep")
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0"}
	done := inCgroup(t, cmd, dir)
	out, err := cmd.Output()
	done()
	if err != nil {
		t.Fatalf("sweep helper: %v (%s)", err, out)
	}
	var rep SweepReport
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, " ", 4)
		switch {
		case len(f) >= 2 && f[0] == "error":
			t.Fatalf("sweep helper: %s", line)
		case len(f) == 4:
			it := SweptItem{Path: f[1]}
			it.HostPid, _ = strconv.Atoi(f[2])
			if f[0] == "failed" {
				it.Err = errors.New(f[3])
				rep.Failed = append(rep.Failed, it)
				continue
			}
			for _, p := range strings.Split(f[3], ",") {
				if n, err := strconv.Atoi(p); err == nil {
					it.Pids = append(it.Pids, n)
				}
			}
			rep.Swept = append(rep.Swept, it)
		case line != "":
			t.Fatalf("sweep helper said %q", line)
		}
	}
	return rep
}
