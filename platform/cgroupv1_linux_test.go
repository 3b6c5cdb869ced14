package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Resource limits through the cgroup v1 fallback: these tests run where the
// host's cgroup v2 lacks the controller and a writable v1 hierarchy has it.

// requireV1 skips, with the precise reason, unless a limit of this controller would go
// through the v1 fallback here; it returns the host's v1 cgroup directory.
func requireV1(t *testing.T, controller string) string {
	t.Helper()
	requireRoot(t)
	if dir, err := ownCgroupDir(); err == nil {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if slices.Contains(strings.Fields(string(b)), controller) {
			t.Skipf("cgroup v2 %s delegates %s: the v1 fallback is not used", dir, controller)
		}
	}
	dir, err := ownV1Dir(controller)
	if err != nil {
		t.Skipf("no cgroup v1 %s hierarchy: %v", controller, err)
	}
	probe := filepath.Join(dir, fmt.Sprintf("akprobe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		t.Skipf("may not create cgroup v1 %s cgroups under %s: %v", controller, dir, err)
	}
	_ = unix.Rmdir(probe)
	return dir
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// hostThreadsIn returns the threads of this (host) process whose cgroups include an
// adapter's cgroup.
func hostThreadsIn(t *testing.T) []string {
	t.Helper()
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tid := range tids {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", tid.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), cgroupPrefix) {
			out = append(out, tid.Name()+": "+string(b))
		}
	}
	return out
}

// The adapter is born in both v1 cgroups, with the limits exactly as asked, and the
// spawner thread is back in its own cgroups; Close removes the v1 cgroups.
func TestV1ChildBornInCgroups(t *testing.T) {
	memParent := requireV1(t, "memory")
	pidsParent := requireV1(t, "pids")
	res := Resources{MemoryBytes: 256 << 20, MaxProcesses: 64}
	tree := startHelper(t, Config{Resources: res}, "echo")
	if err := tree.LimitErr(); err != nil {
		t.Fatalf("LimitErr = %v, want both limits applied through cgroup v1", err)
	}
	v1 := tree.sys.v1
	if v1 == nil || v1.mem == nil || v1.pids == nil {
		t.Fatalf("no v1 cgroups: %+v", v1)
	}
	if filepath.Dir(v1.mem.path) != memParent || filepath.Dir(v1.pids.path) != pidsParent {
		t.Fatalf("v1 cgroups %s %s, want under %s and %s", v1.mem.path, v1.pids.path, memParent, pidsParent)
	}
	if tree.CgroupPath() != "" && filepath.Base(tree.CgroupPath()) != filepath.Base(v1.mem.path) {
		t.Errorf("v1 name %s differs from the v2 one %s", filepath.Base(v1.mem.path), tree.CgroupPath())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", tree.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ controller, dir string }{{"memory", v1.mem.path}, {"pids", v1.pids.path}} {
		got, err := v1Dir(c.controller, b)
		if err != nil || got != c.dir {
			t.Errorf("adapter's %s cgroup is %q (%v), want %q", c.controller, got, err, c.dir)
		}
		if !slices.Contains((&cgroup{path: c.dir, v1: true}).pids(), tree.Pid()) {
			t.Errorf("adapter %d not listed in %s/cgroup.procs", tree.Pid(), c.dir)
		}
	}
	if got := readTrim(t, v1.pids.file("pids.max")); got != strconv.Itoa(res.MaxProcesses) {
		t.Errorf("pids.max = %s, want %d", got, res.MaxProcesses)
	}
	for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
		if _, err := os.Stat(v1.mem.file(f)); err != nil && f != "memory.limit_in_bytes" {
			continue // no swap accounting in this kernel
		}
		if got := readTrim(t, v1.mem.file(f)); got != strconv.FormatInt(res.MemoryBytes, 10) {
			t.Errorf("%s = %s, want %d", f, got, res.MemoryBytes)
		}
	}
	if stuck := hostThreadsIn(t); len(stuck) > 0 {
		t.Fatalf("host threads left in adapter cgroups: %v", stuck)
	}
	// The adapter works, and a tree that ends without hitting its limit says so.
	if _, err := tree.Stdin().Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, tree.Stdout()); got != "ping" {
		t.Fatalf("echo = %q", got)
	}
	shutdown(t, tree)
	if err := tree.LimitHit(); err != nil {
		t.Errorf("LimitHit = %v for a tree that never hit its limit", err)
	}
	for _, d := range []string{v1.mem.path, v1.pids.path} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("v1 cgroup %s not removed: %v", d, err)
		}
	}
}

// An adapter that forks without end is refused at the cap with EAGAIN, and stays
// alive and answering.
func TestV1ProcessCapEnforced(t *testing.T) {
	requireV1(t, "pids")
	const maxProcs = 32
	tree := startHelper(t, Config{Resources: Resources{MaxProcesses: maxProcs}}, "forkbomb")
	if err := tree.LimitErr(); err != nil {
		t.Fatalf("LimitErr = %v", err)
	}
	pids := tree.sys.v1.pids
	f := strings.Fields(readLine(t, tree.Stdout()))
	if len(f) != 3 || f[0] != "refused" || f[2] != "true" {
		t.Fatalf("fork without end reported %q, want refused with EAGAIN", f)
	}
	t.Logf("fork refused with EAGAIN after %s children", f[1])
	if n, ok := keyedValue([]byte(readTrim(t, pids.file("pids.events"))), "max"); !ok || n == 0 {
		t.Errorf("pids.events counts no refused fork (%d, %v)", n, ok)
	}
	if got := readTrim(t, pids.file("pids.max")); got != strconv.Itoa(maxProcs) {
		t.Errorf("pids.max = %s, want %d", got, maxProcs)
	}
	if _, err := tree.Stdin().Write([]byte("still here\n")); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, tree.Stdout()); got != "still here" {
		t.Fatalf("adapter after the refused forks: %q", got)
	}
	if stuck := hostThreadsIn(t); len(stuck) > 0 {
		t.Fatalf("host threads left in adapter cgroups: %v", stuck)
	}
}

// An adapter that allocates without end is killed by the kernel at its memory limit,
// and LimitHit says so, also after Close.
func TestV1MemoryCapKillsAndIsAttributed(t *testing.T) {
	requireV1(t, "memory")
	tree := startHelper(t, Config{Resources: Resources{MemoryBytes: 64 << 20}}, "alloc")
	if err := tree.LimitErr(); err != nil {
		t.Fatalf("LimitErr = %v", err)
	}
	if got := readLine(t, tree.Stdout()); got != "allocating" {
		t.Fatalf("helper said %q", got)
	}
	ctx := ctxBound(t)
	select {
	case <-tree.Exited():
	case <-ctx.Done():
		t.Fatal("the allocating adapter was not stopped")
	}
	ws, ok := tree.ExitState().Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("exit state %v, want killed by SIGKILL", tree.ExitState())
	}
	if err := tree.LimitHit(); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("LimitHit = %v, want ErrMemoryLimit", err)
	}
	shutdown(t, tree)
	if err := tree.LimitHit(); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("LimitHit after Close = %v, want ErrMemoryLimit", err)
	}
}

// Sweep kills and removes a v1 cgroup left by a dead host, and leaves a live host's.
// It may race other hosts' sweeps of the same parent: the test asserts what it owns
// (TestSweepDirReport/v1 checks the report on a private parent).
func TestSweepV1Leftover(t *testing.T) {
	parent := requireV1(t, "memory")
	deadPid, start := deadHost(t)
	leftover := &cgroup{path: filepath.Join(parent, fmt.Sprintf("%s%d-%d-1", cgroupPrefix, deadPid, start)), v1: true}
	live := &cgroup{path: filepath.Join(parent, fmt.Sprintf("%s%d-%d-999999", cgroupPrefix, os.Getpid(), start)), v1: true}
	for _, cg := range []*cgroup{leftover, live} {
		if err := os.Mkdir(cg.path, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cg.kill()
			_ = unix.Rmdir(cg.path)
		})
	}
	orphan := orphanIn(t, leftover.path, true)
	rep, err := Sweep(ctxBound(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(rep.Swept, func(it SweptItem) bool { return it.Path == live.path }) {
		t.Error("the live host's v1 cgroup was swept")
	}
	wantKilled(t, orphan)
	wantSweptAway(t, rep, leftover.path)
	if _, err := os.Stat(live.path); err != nil {
		t.Errorf("live host's v1 cgroup removed: %v", err)
	}
}
