package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// grantDir returns a fresh adapter directory (symbolic links resolved) holding copies of
// the named test adapters (file names of adapterDir).
func grantDir(t *testing.T, names ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		copyAdapter(t, filepath.Join(dir, n), n)
	}
	return dir
}

// copyAdapter installs a copy of adapterDir's file name at dst (mode 0755).
func copyAdapter(t *testing.T, dst, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(adapterDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// wantOverlap fails unless err is the refusal of adapter's grant (or executable) inside
// writer's write grant write.
func wantOverlap(t *testing.T, err error, adapter, grant string, executable bool, writer, write string) {
	t.Helper()
	var oe *registry.GrantOverlapError
	if !errors.As(err, &oe) || !errors.Is(err, platform.ErrInvalidConfig) {
		t.Fatalf("error %v, want a *GrantOverlapError", err)
	}
	if oe.Adapter != adapter || oe.Grant != grant || oe.Executable != executable || oe.Writer != writer || oe.Write != write {
		t.Fatalf("refusal %+v, want %s's %s (executable %v) inside %s's %s", oe, adapter, grant, executable, writer, write)
	}
	if !strings.Contains(err.Error(), "adapter "+writer+"'s write grant "+write) {
		t.Errorf("%q does not name the writer", err)
	}
}

// The executable of a contained adapter lying inside another adapter's write grant is
// refused at its first open, although the writer was never started, and so is the
// writer's; an adapter whose grants lie outside every other's write grant starts.
func TestGrantOverlapExecutable(t *testing.T) {
	dir := grantDir(t, testkit.Echo.Name, testkit.Thermometer.Name)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t, func(c *registry.Config) {
		c.Dirs = []string{dir}
		c.Sandbox = &platform.Sandbox{}
		c.Sandboxes = map[string]*platform.Sandbox{"thermometer": {Write: []string{dir}}}
	})
	_, err := r.Open(ctxT(t), "echo", nil)
	wantOverlap(t, err, "echo", filepath.Join(dir, testkit.Echo.Name), true, "thermometer", dir)
	var oerr *lifecycle.OpenError
	if !errors.As(err, &oerr) || oerr.Stage != lifecycle.StageSpawn {
		t.Errorf("not refused before the spawn: %v", err)
	}
	_, err = r.Open(ctxT(t), "thermometer", nil)
	wantOverlap(t, err, "echo", filepath.Join(dir, testkit.Echo.Name), true, "thermometer", dir)

	// Write grants beside the executables: both start.
	r = newRegistry(t, func(c *registry.Config) {
		c.Dirs = []string{dir}
		c.Sandbox = &platform.Sandbox{Read: []string{dir}}
		c.Sandboxes = map[string]*platform.Sandbox{"thermometer": {Write: []string{data}}}
	})
	for _, ref := range []string{"echo", "thermometer"} {
		if _, err := r.Open(ctxT(t), ref, nil); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
	}
}

// The rule holds at every start: an adapter running while no other's write grant held
// its grants is not restarted once one does (here a new adapter dropped into a
// directory its write grant covers, a grant of the new one).
func TestGrantOverlapRestart(t *testing.T) {
	dir := grantDir(t, testkit.Echo.Name)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t, func(c *registry.Config) {
		c.Dirs = []string{dir, data}
		c.Sandbox = &platform.Sandbox{}
		c.Sandboxes = map[string]*platform.Sandbox{"echo": {Write: []string{data}}}
		c.Restart = lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond}
	})
	h, err := r.Open(ctxT(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := h.Status().Pid
	thermo := filepath.Join(data, testkit.Thermometer.Name)
	copyAdapter(t, thermo, testkit.Thermometer.Name)
	if _, err := r.Discover(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Within(5*time.Second, func() bool { // a call may reach it before it ends
		_, err = h.Call(ctxT(t), "example.echo.echo", nil)
		return errors.Is(err, lifecycle.ErrGaveUp)
	})
	if !errors.Is(err, lifecycle.ErrGaveUp) {
		t.Fatalf("call after the process died: %v", err)
	}
	wantOverlap(t, err, "thermometer", thermo, true, "echo", data)
	testkit.Gone(t, pid)
	_, err = r.Open(ctxT(t), "thermometer", nil)
	wantOverlap(t, err, "thermometer", thermo, true, "echo", data)
}
