package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cgroup v2 half of resource limits (memory.max, pids.max, memory.events) cannot
// run on machines whose v2 hierarchy has no memory or pids controller (hybrid
// hierarchies, where both are on v1: there TestResourceLimits and the e2e limit test
// take the v1 branch). Its parsing and attribution are exercised here against files
// in the kernel's format (testdata/cgroup2: memory.events as 5.4 writes it, and as 6.x
// writes it with oom_group_kill), placed in a plain directory that stands for the
// adapter's cgroup.

// fakeCgroup2 is a directory holding the given interface files, taken from testdata.
func fakeCgroup2(t *testing.T, files map[string]string) *cgroup {
	t.Helper()
	dir := t.TempDir()
	for name, recorded := range files {
		b, err := os.ReadFile(filepath.Join("testdata", "cgroup2", recorded))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &cgroup{path: dir, memLimit: true}
}

func TestLimitHitV2MemoryEvents(t *testing.T) {
	cases := []struct {
		recorded string
		memLimit bool
		kills    string // "" for no ErrMemoryLimit
	}{
		{"memory.events.oom-kill-6.x", true, "killed 2 process(es)"},
		{"memory.events.oom-kill-5.4", true, "killed 1 process(es)"},
		{"memory.events.quiet-6.x", true, ""},
		// Reclaim at the limit and OOM events without a kill: the tree was not stopped.
		{"memory.events.oom-no-kill-6.x", true, ""},
		// Attribution only where this tree's memory.max was applied: a counter of a
		// cgroup whose limit is someone else's says nothing about ours.
		{"memory.events.oom-kill-6.x", false, ""},
	}
	for _, c := range cases {
		cg := fakeCgroup2(t, map[string]string{"memory.events": c.recorded})
		cg.memLimit = c.memLimit
		err := (&osTree{cg: cg}).limitHit()
		switch {
		case c.kills == "" && err != nil:
			t.Errorf("%s (memLimit %v): LimitHit = %v, want nil", c.recorded, c.memLimit, err)
		case c.kills != "" && (!errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), c.kills)):
			t.Errorf("%s: LimitHit = %v, want ErrMemoryLimit that %s", c.recorded, err, c.kills)
		}
	}
	// No memory.events (the controller went away, or the cgroup is gone): no claim.
	cg := fakeCgroup2(t, nil)
	if err := (&osTree{cg: cg}).limitHit(); err != nil {
		t.Errorf("without memory.events: LimitHit = %v, want nil", err)
	}
}

// What LimitHit says after Close is what memory.events said before the cgroup was
// removed: release reads it first, and the answer no longer depends on the files.
func TestLimitHitV2SurvivesRelease(t *testing.T) {
	cg := fakeCgroup2(t, map[string]string{
		"memory.events": "memory.events.oom-kill-5.4",
		"cgroup.events": "cgroup.events.empty",
	})
	s := &osTree{cg: cg}
	_ = s.release(nil) // the stand-in directory is not empty, so its removal fails; that is not under test
	if err := os.Remove(filepath.Join(cg.path, "memory.events")); err != nil {
		t.Fatal(err)
	}
	if err := s.limitHit(); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("LimitHit after release = %v, want the ErrMemoryLimit read before", err)
	}
}

// newCgroup applies memory.max and pids.max where they exist, and reports by name the
// limits whose controller is missing, as on a v2 hierarchy without them.
func TestNewCgroupV2MissingControllers(t *testing.T) {
	parent := t.TempDir() // a plain directory: its "cgroups" have no interface files
	cg, err := newCgroup(parent, 1, Resources{MemoryBytes: 64 << 20, MaxProcesses: 32})
	if err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if !errors.As(cg.limitErr, &le) || !errors.Is(cg.limitErr, ErrLimitUnsupported) ||
		strings.Join(le.Limits, ",") != "memory,processes" || !strings.Contains(le.Reason, "cgroup.subtree_control") {
		t.Fatalf("limitErr = %#v, want memory and processes named as not applied", cg.limitErr)
	}
	if cg.memLimit {
		t.Error("memLimit set although memory.max could not be written")
	}
}
