//go:build linux

package registry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
)

// upgradeEnv is a directory of versions of the test adapter "upg" (testkit.Versioned)
// and a registry that follows their upgrades.
type upgradeEnv struct {
	dir, staging string
	reg          *registry.Registry

	mu     sync.Mutex
	events []registry.UpgradeEvent
	starts []string // paths of every process started
}

// newUpgradeEnv installs the given versions and opens a registry whose Config mod may
// change (Env for the test modes, Pins, Upgrade.Allowed ...).
func newUpgradeEnv(t *testing.T, mod func(*registry.Config), versions ...string) *upgradeEnv {
	t.Helper()
	root := t.TempDir()
	e := &upgradeEnv{dir: filepath.Join(root, "adapters"), staging: filepath.Join(root, "staging")}
	for _, d := range []string{e.dir, e.staging} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range versions {
		e.install(t, v, nil)
	}
	cfg := &registry.Config{
		Dirs: []string{e.dir},
		Upgrade: &registry.Upgrade{Settle: 20 * time.Millisecond, OnUpgrade: func(ev registry.UpgradeEvent) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		}},
		Observer: &lifecycle.Observer{ProcessStart: func(p lifecycle.ProcessInfo) {
			e.mu.Lock()
			e.starts = append(e.starts, p.Path)
			e.mu.Unlock()
		}},
	}
	if mod != nil {
		mod(cfg)
	}
	e.reg = registry.New(cfg)
	t.Cleanup(func() {
		if err := e.reg.Close(context.Background()); err != nil {
			t.Errorf("registry Close: %v", err)
		}
	})
	return e
}

// install puts the adapter in place as upg_vVERSION the way an operator does: written
// elsewhere on the same file system, then renamed into the directory (mv). extra is
// appended to the executable, to give a version its own digest.
func (e *upgradeEnv) install(t *testing.T, ver string, extra []byte) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(e.staging, "upg_v"+ver)
	if err := os.WriteFile(tmp, append(b, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(e.dir, "upg_v"+ver)
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func (e *upgradeEnv) eventList() []registry.UpgradeEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

func (e *upgradeEnv) started() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.starts)
}

type versionResult struct {
	Version string `json:"version"`
	Pid     int    `json:"pid"`
}

// versionOf asks the handle which version answers.
func versionOf(t *testing.T, h *registry.Handle) versionResult {
	t.Helper()
	raw, err := h.Call(ctxT(t), "example.echo.version", nil)
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	var v versionResult
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// waitFor polls cond until it holds, failing t after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, cond, "timed out waiting for %s", what)
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
