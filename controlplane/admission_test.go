//go:build linux

package controlplane

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

// A broken newest version present before the first call (it arrived while the
// daemon was down) is refused at the first open — here by Upgrade before any call,
// which opens the name under the same rule — and the older version serves. After a
// restart with the record saved, the name serves its last good version and the
// broken file is not started again.
func TestAdmissionUpgradeBeforeFirstCall(t *testing.T) {
	dir := adapterDir(t)
	installVersion(t, dir, "1.0.0")
	installVersion(t, dir, "1.2.0")
	state := filepath.Join(t.TempDir(), "state")
	cfg := ServerConfig{Dirs: []string{dir}, StateDir: state, WatchInterval: time.Hour,
		Env: []string{"ADAPTERKIT_TEST_MODE_1.2.0=exit"}, Upgrade: &registry.Upgrade{Settle: 20 * time.Millisecond}}
	sock, stop := serveUntil(t, cfg)
	c := dial(t, sock)
	r, err := c.Upgrade(testCtx(t), "upg")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 || r.Adapters[0].Version != "1.0.0" || !strings.Contains(r.Adapters[0].UpgradeError, "1.2.0") || r.RefusedNotSaved != "" {
		t.Fatalf("Upgrade before the first call: %+v", r)
	}
	st, err := c.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	p12 := filepath.Join(dir, "upg_v1.2.0")
	if st.Health != healthOK || len(st.Refused) != 1 || st.Refused[0].Path != p12 || st.Refused[0].Serving != "1.0.0" {
		t.Fatalf("Status: health %s, refused %+v", st.Health, st.Refused)
	}
	_ = c.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if list, err := loadRefused(state); err != nil || len(list) != 1 || list[0].Path != p12 {
		t.Fatalf("saved record %+v, %v", list, err)
	}
	sock, _ = serveUntil(t, cfg)
	c = dial(t, sock)
	if v := sendVersion(t, c); v.Version != "1.0.0" {
		t.Fatalf("after a restart %+v serves", v)
	}
}

// A refusal whose record cannot be saved (the state directory's file system is full)
// is not lost quietly: health is degraded with the reason, the Upgrade answer says
// the record is held in memory only, the failures are counted, and once there is
// space again a retry saves it.
func TestRefusalSaveFailureDegradesHealth(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small tmpfs as a full state directory")
	}
	first := refusedRetryFirst
	refusedRetryFirst = 20 * time.Millisecond
	t.Cleanup(func() { refusedRetryFirst = first })
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	state := filepath.Join(mnt, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break // full
		}
	}
	_ = f.Close()

	dir := adapterDir(t)
	installVersion(t, dir, "1.0.0")
	installVersion(t, dir, "1.2.0")
	sock, _ := serveUntil(t, ServerConfig{Dirs: []string{dir}, StateDir: state, WatchInterval: time.Hour,
		Env: []string{"ADAPTERKIT_TEST_MODE_1.2.0=exit"}, Upgrade: &registry.Upgrade{Settle: 20 * time.Millisecond}})
	c := dial(t, sock)
	r, err := c.Upgrade(testCtx(t), "upg")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 || r.Adapters[0].Version != "1.0.0" || !strings.Contains(r.RefusedNotSaved, "held in memory only") {
		t.Fatalf("Upgrade with a full state directory: %+v", r)
	}
	st, err := c.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Health != healthDegraded || !strings.Contains(st.RefusedNotSaved, "no space left") || st.RefusedSaveFailures == 0 || len(st.Refused) != 1 {
		t.Fatalf("Status with a full state directory: health %s, not saved %q, failures %d, refused %+v",
			st.Health, st.RefusedNotSaved, st.RefusedSaveFailures, st.Refused)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if !testkit.Within(20*time.Second, func() bool {
		if st, err = c.Status(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		return st.Health == healthOK
	}) {
		t.Fatalf("the record was not saved once there was space: %+v", st)
	}
	if list, err := loadRefused(state); err != nil || len(list) != 1 || list[0].Path != filepath.Join(dir, "upg_v1.2.0") {
		t.Fatalf("saved record %+v, %v", list, err)
	}
}
