//go:build linux

package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
)

// pinnedElsewhere pins upg to the digest of the plain test adapter (what install
// puts with no extra bytes) and to that of the adapter with "rebuilt" appended: a
// version installed with other extra bytes is refused by the pin.
func pinnedElsewhere(c *registry.Config) {
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		panic(err)
	}
	plain, rebuilt := sha256.Sum256(b), sha256.Sum256(append(b, "rebuilt"...))
	c.Upgrade.Allowed = map[string][]string{"upg": {hex.EncodeToString(plain[:]), hex.EncodeToString(rebuilt[:])}}
}

// saved collects what the registry hands to OnRefused.
type saved struct {
	mu   sync.Mutex
	last []registry.Refusal
	n    int
}

func (s *saved) keep(c *registry.Config) {
	c.OnRefused = func(l []registry.Refusal) {
		s.mu.Lock()
		s.last, s.n = l, s.n+1
		s.mu.Unlock()
	}
}

func (s *saved) get() ([]registry.Refusal, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.n
}

// refusedBy reports whether err is a *registry.RefusedError for path.
func refusedBy(err error, path string) bool {
	var re *registry.RefusedError
	return errors.As(err, &re) && re.Refusal.Path == path
}

// A file an upgrade refused (here: a pin) is started by no other path: not by NAME,
// which serves the newest version not refused, not by NAME@VERSION or by its path
// (a typed error saying when and why), not by Lookup. A new file at its path is a new
// decision; Retry forgets the refusal.
func TestRefusedFileStartsByNoPath(t *testing.T) {
	var st saved
	e := newUpgradeEnv(t, func(c *registry.Config) { pinnedElsewhere(c); st.keep(c) }, "1.1.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	p15 := e.install(t, "1.5.0", []byte("unpinned"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if up := h.Upgrades(); up.Version != "1.1.0" || !errors.Is(up.Err, discovery.ErrDigestMismatch) {
		t.Fatalf("the pin did not refuse 1.5.0: %+v", up)
	}
	rs := e.reg.Refused()
	if len(rs) != 1 || rs[0].Path != p15 || rs[0].Name != "upg" || rs[0].Version != "1.5.0" || !rs[0].Pin ||
		len(rs[0].SHA256) != 64 || rs[0].At.IsZero() || !strings.Contains(rs[0].Reason, "SHA-256") {
		t.Fatalf("Refused() = %+v", rs)
	}
	if l, n := st.get(); n != 1 || len(l) != 1 || l[0] != rs[0] {
		t.Fatalf("OnRefused got %d calls, last %+v", n, l)
	}

	for _, ref := range []string{"upg", "upg@1.5.0", "upg@>= 1.5", p15} {
		h2, err := e.reg.Open(ctxT(t), ref, nil)
		if ref == "upg" {
			if err != nil || h2.Path() == p15 {
				t.Fatalf("Open(%q) = %v, %v: want the newest version not refused", ref, h2, err)
			}
			_ = h2.Close()
			continue
		}
		if !refusedBy(err, p15) {
			t.Fatalf("Open(%q) = %v, %v: want a *RefusedError", ref, h2, err)
		}
		if _, err := e.reg.Lookup(ctxT(t), ref); !refusedBy(err, p15) {
			t.Fatalf("Lookup(%q): %v", ref, err)
		}
	}
	if a, err := e.reg.Lookup(ctxT(t), "upg"); err != nil || a.Version.String() != "1.1.0" {
		t.Fatalf("Lookup(upg) = %+v, %v", a, err)
	}
	if n := countOf(e.started(), p15); n != 0 {
		t.Fatalf("the refused file was started %d times", n)
	}

	// Retry forgets it: it is tried again, and the pin, still in force, refuses it
	// again without executing it.
	if got := e.reg.Retry("upg"); len(got) != 1 || got[0].Path != p15 {
		t.Fatalf("Retry = %+v", got)
	}
	if l, n := st.get(); n != 2 || len(l) != 0 {
		t.Fatalf("after Retry OnRefused got %d calls, last %+v", n, l)
	}
	if _, err := e.reg.Open(ctxT(t), p15, nil); !refusedBy(err, p15) || !errors.Is(err, discovery.ErrDigestMismatch) {
		t.Fatalf("after Retry: %v", err)
	}
	if n := countOf(e.started(), p15); n != 0 {
		t.Fatalf("the unpinned file was started %d times after Retry", n)
	}

	// Refused again, then replaced by a new file at the same path: a new decision.
	e.install(t, "1.5.1", []byte("unpinned"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p151 := filepath.Join(e.dir, "upg_v1.5.1")
	if _, err := e.reg.Open(ctxT(t), p151, nil); !refusedBy(err, p151) {
		t.Fatalf("1.5.1 not refused: %v", err)
	}
	e.install(t, "1.5.1", []byte("rebuilt"))
	h4, err := e.reg.Open(ctxT(t), p151, nil)
	if err != nil {
		t.Fatalf("a new file at a refused path: %v", err)
	}
	_ = h4.Close()
	for _, rf := range e.reg.Refused() {
		if rf.Path == p151 {
			t.Fatalf("the replaced file's refusal is kept: %+v", rf)
		}
	}
}

// A process started from a file before the file was refused is not restarted from
// it: the restart is refused, calls fail with ErrGaveUp and the *RefusedError.
func TestRefusedFileNotRestarted(t *testing.T) {
	e := newUpgradeEnv(t, func(c *registry.Config) {
		c.Env = []string{"ADAPTERKIT_TEST_MODE_1.5.0=nosleep"} // an upgrade to it is refused
		c.Restart = lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: 10 * time.Millisecond}
	}, "1.1.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	p15 := e.install(t, "1.5.0", nil)
	byPath, err := e.reg.Open(ctxT(t), p15, nil) // not refused yet
	if err != nil {
		t.Fatal(err)
	}
	v := versionOf(t, byPath)
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if up := h.Upgrades(); up.Version != "1.1.0" || up.Err == nil {
		t.Fatalf("1.5.0 not refused: %+v", up)
	}
	if err := syscall.Kill(v.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Within(5*time.Second, func() bool { // a call may find it ending, or reach it before
		_, err = byPath.Call(ctxT(t), "example.echo.version", nil)
		return errors.Is(err, lifecycle.ErrGaveUp)
	})
	if !errors.Is(err, lifecycle.ErrGaveUp) || !refusedBy(err, p15) {
		t.Fatalf("call after the refused file's process died: %v", err)
	}
	if n := countOf(e.started(), p15); n != 2 {
		t.Fatalf("1.5.0 started %d times, want twice (by path, then tried as an upgrade; never restarted)", n)
	}
	testkit.Gone(t, v.Pid)
}

// The record survives the registry: a registry given it (a daemon restarted) serves
// the version that served before instead of the newer file refused — here a broken
// one that exits at start — and a refusal by a pin is forgotten once the pin is
// removed. A record whose file is gone is left out.
func TestRefusalsSurviveRestart(t *testing.T) {
	var st saved
	env := []string{"ADAPTERKIT_TEST_MODE_1.2.0=exit"}
	e := newUpgradeEnv(t, func(c *registry.Config) { c.Env = env; st.keep(c) }, "1.1.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	p12 := e.install(t, "1.2.0", nil)
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if up := h.Upgrades(); up.Version != "1.1.0" || up.Err == nil {
		t.Fatalf("the broken 1.2.0 was not refused: %+v", up)
	}
	record, _ := st.get()
	if len(record) != 1 || record[0].Pin {
		t.Fatalf("record %+v", record)
	}

	again := func(mod func(*registry.Config)) *registry.Registry {
		cfg := &registry.Config{Dirs: []string{e.dir}, Env: env, Refused: record, Upgrade: &registry.Upgrade{}}
		if mod != nil {
			mod(cfg)
		}
		r := registry.New(cfg)
		t.Cleanup(func() { _ = r.Close(context.Background()) })
		return r
	}
	r2 := again(nil)
	h2, err := r2.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatalf("after a restart, Open(upg): %v", err)
	}
	if v := versionOf(t, h2); v.Version != "1.1.0" {
		t.Fatalf("after a restart %+v serves", v)
	}
	if _, err := r2.Open(ctxT(t), p12, nil); !refusedBy(err, p12) {
		t.Fatalf("after a restart, Open(path): %v", err)
	}

	// A pin's refusal lasts while the pin does.
	pinned := again(func(c *registry.Config) { pinnedElsewhere(c); st.keep(c) })
	hp, err := pinned.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	p13 := e.install(t, "1.3.0", []byte("unpinned"))
	if err := pinned.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if up := hp.Upgrades(); up.Version != "1.1.0" || !errors.Is(up.Err, discovery.ErrDigestMismatch) {
		t.Fatalf("pin: %+v", up)
	}
	record, _ = st.get()
	if len(record) != 2 || record[0].Path != p12 || record[1].Path != p13 || !record[1].Pin {
		t.Fatalf("record %+v", record)
	}
	stillPinned := again(func(c *registry.Config) { pinnedElsewhere(c); c.Refused = record })
	if _, err := stillPinned.Open(ctxT(t), p13, nil); !refusedBy(err, p13) {
		t.Fatalf("pin kept: %v", err)
	}
	unpinned := again(func(c *registry.Config) { c.Refused = record })
	if rs := unpinned.Refused(); len(rs) != 1 || rs[0].Path != p12 {
		t.Fatalf("pin removed: the record is %+v, want only 1.2.0's", rs)
	}
	h3, err := unpinned.Open(ctxT(t), p13, nil)
	if err != nil {
		t.Fatalf("pin removed: %v", err)
	}
	_ = h3.Close()

	// A record whose file is gone is left out.
	if err := os.Remove(p13); err != nil {
		t.Fatal(err)
	}
	if rs := again(func(c *registry.Config) { pinnedElsewhere(c); c.Refused = record }).Refused(); len(rs) != 1 || rs[0].Path != p12 {
		t.Fatalf("gone file's refusal kept: %+v", rs)
	}
}
