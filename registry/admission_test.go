//go:build linux

package registry_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
)

// plainDigest is the hex SHA-256 of the versioned test adapter as install puts it
// with no extra bytes.
func plainDigest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A newest version that fails its start at the first open (a file that arrived while
// no handle was open) is refused, with the record and status of a refused upgrade,
// and the name is served by the next older version; later opens do not start it
// again. With no version that starts, nothing is refused for failing.
func TestAdmissionBrokenNewestAtFirstOpen(t *testing.T) {
	var st saved
	e := newUpgradeEnv(t, func(c *registry.Config) {
		c.Env = []string{"ADAPTERKIT_TEST_MODE_1.2.0=exit"}
		st.keep(c)
	}, "1.0.0", "1.2.0")
	p12 := filepath.Join(e.dir, "upg_v1.2.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if v := versionOf(t, h); v.Version != "1.0.0" {
		t.Fatalf("%+v answers, want 1.0.0", v)
	}
	var ue *registry.UpgradeError
	var oe *lifecycle.OpenError
	up := h.Upgrades()
	if up.Version != "1.0.0" || !errors.As(up.Err, &ue) || ue.Version != "1.2.0" || ue.Path != p12 || !errors.As(up.Err, &oe) {
		t.Fatalf("Upgrades() = %+v", up)
	}
	rs := e.reg.Refused()
	if len(rs) != 1 || rs[0].Path != p12 || rs[0].Version != "1.2.0" || rs[0].Pin || len(rs[0].SHA256) != 64 {
		t.Fatalf("Refused() = %+v", rs)
	}
	if l, n := st.get(); n != 1 || len(l) != 1 || l[0] != rs[0] {
		t.Fatalf("OnRefused: %d calls, last %+v", n, l)
	}
	if evs := e.eventList(); len(evs) != 1 || evs[0].To != "1.2.0" || evs[0].From != "" || !errors.As(evs[0].Err, &ue) {
		t.Fatalf("events %+v", evs)
	}
	if a, err := e.reg.Lookup(ctxT(t), "upg"); err != nil || a.Version.String() != "1.0.0" {
		t.Fatalf("Lookup(upg) = %+v, %v", a, err)
	}
	h2, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil || versionOf(t, h2).Version != "1.0.0" {
		t.Fatalf("second Open: %v", err)
	}
	if n := countOf(e.started(), p12); n != 1 {
		t.Fatalf("the broken 1.2.0 was started %d times, want once", n)
	}

	t.Run("no version starts", func(t *testing.T) {
		e := newUpgradeEnv(t, func(c *registry.Config) {
			c.Env = []string{"ADAPTERKIT_TEST_MODE_1.0.0=exit", "ADAPTERKIT_TEST_MODE_1.2.0=exit"}
		}, "1.0.0", "1.2.0")
		_, err := e.reg.Open(ctxT(t), "upg", nil)
		if !errors.As(err, &oe) || oe.Path != filepath.Join(e.dir, "upg_v1.2.0") {
			t.Fatalf("Open = %v, want the newest's start failure", err)
		}
		if rs := e.reg.Refused(); len(rs) != 0 {
			t.Fatalf("refused with nothing serving: %+v", rs)
		}
	})
}

// A pinned name never executes a file whose digest is not pinned: not at the first
// open (the newest pinned version serves, the other is refused by the pin), not by
// path. With no pinned file present the open fails without starting anything.
func TestPinAdmissionAtFirstOpen(t *testing.T) {
	pinned := func(c *registry.Config) { c.Upgrade.Allowed = map[string][]string{"upg": {plainDigest(t)}} }
	e := newUpgradeEnv(t, pinned, "1.0.0")
	p11 := e.install(t, "1.1.0", []byte("unpinned"))
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if v := versionOf(t, h); v.Version != "1.0.0" {
		t.Fatalf("%+v answers, want the pinned 1.0.0", v)
	}
	if up := h.Upgrades(); !errors.Is(up.Err, discovery.ErrDigestMismatch) {
		t.Fatalf("Upgrades() = %+v", up)
	}
	if rs := e.reg.Refused(); len(rs) != 1 || rs[0].Path != p11 || !rs[0].Pin {
		t.Fatalf("Refused() = %+v", rs)
	}
	if _, err := e.reg.Open(ctxT(t), p11, nil); !refusedBy(err, p11) {
		t.Fatalf("Open by path = %v", err)
	}
	if n := countOf(e.started(), p11); n != 0 {
		t.Fatalf("the unpinned 1.1.0 was executed %d times", n)
	}

	t.Run("only unpinned files", func(t *testing.T) {
		e := newUpgradeEnv(t, pinned)
		p := e.install(t, "1.3.0", []byte("unpinned"))
		if _, err := e.reg.Open(ctxT(t), "upg", nil); !refusedBy(err, p) {
			t.Fatalf("Open = %v, want refused by the pin", err)
		}
		if n := len(e.started()); n != 0 {
			t.Fatalf("%d processes started", n)
		}
	})
}
