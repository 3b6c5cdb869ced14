//go:build linux

package controlplane

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

// installVersion puts the versioned test adapter into dir as upg_vVER by a rename,
// as an operator's mv does.
func installVersion(t *testing.T, dir, ver string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "upg")
	copyFile(t, filepath.Join(built, testkit.Versioned.Name), tmp)
	if err := os.Rename(tmp, filepath.Join(dir, "upg_v"+ver)); err != nil {
		t.Fatal(err)
	}
}

type upgVersion struct {
	Version string `json:"version"`
	Pid     int    `json:"pid"`
}

func sendVersion(t *testing.T, c *Client) upgVersion {
	t.Helper()
	r, err := c.Send(testCtx(t), SendParams{Adapter: "upg", Method: "example.echo.version"})
	if err != nil {
		t.Fatal(err)
	}
	var v upgVersion
	if err := json.Unmarshal(r.Value, &v); err != nil || r.Adapter.Version != v.Version {
		t.Fatalf("%s from %+v: %v", r.Value, r.Adapter, err)
	}
	return v
}

// Upgrade and Status: one entry per adapter name, with the version serving, the
// upgrades, the old version draining (its call in flight finishes), and the reason a
// broken version was refused.
func TestUpgradeThroughDaemon(t *testing.T) {
	dir := adapterDir(t)
	installVersion(t, dir, "1.0.0")
	sock := startServer(t, ServerConfig{Dirs: []string{dir},
		Env:     []string{"ADAPTERKIT_TEST_MODE_1.2.0=badcatalog"},
		Upgrade: &registry.Upgrade{Settle: 20 * time.Millisecond}, WatchInterval: time.Hour})
	c := dial(t, sock)
	v1 := sendVersion(t, c)
	slow := make(chan error, 1)
	go func() {
		_, err := c.Send(testCtx(t), SendParams{Adapter: "upg", Method: "example.echo.sleep", Params: json.RawMessage(`{"ms":1500}`)})
		slow <- err
	}()
	var st *StatusResult
	if !testkit.Within(10*time.Second, func() bool {
		var err error
		if st, err = c.Status(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		return len(st.Adapters) == 1 && st.Adapters[0].InFlight == 1
	}) {
		t.Fatalf("the slow call is not in flight: %+v", st.Adapters)
	}
	installVersion(t, dir, "1.1.0")
	r, err := c.Upgrade(testCtx(t), "upg")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 {
		t.Fatalf("Upgrade: %+v", r)
	}
	a := r.Adapters[0]
	if a.Name != "upg" || a.Version != "1.1.0" || a.Upgrades != 1 || a.UpgradeError != "" ||
		len(a.Draining) != 1 || a.Draining[0].Version != "1.0.0" || a.Draining[0].PID != v1.Pid || a.Draining[0].InFlight != 1 {
		t.Fatalf("after the upgrade: %+v", a)
	}
	if v := sendVersion(t, c); v.Version != "1.1.0" {
		t.Fatalf("a new call reached %+v", v)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the call in flight on 1.0.0: %v", err)
	}
	installVersion(t, dir, "1.2.0")
	if r, err = c.Upgrade(testCtx(t), ""); err != nil {
		t.Fatal(err)
	}
	testkit.Within(10*time.Second, func() bool {
		if len(r.Adapters) != 1 || len(r.Adapters[0].Draining) == 0 {
			return true
		}
		st, err := c.Status(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		r.Adapters = st.Adapters
		return false
	})
	if len(r.Adapters) != 1 || r.Adapters[0].Version != "1.1.0" || !strings.Contains(r.Adapters[0].UpgradeError, "invalid catalog") || len(r.Adapters[0].Draining) != 0 {
		t.Fatalf("after the broken 1.2.0: %+v", r.Adapters)
	}
	testkit.Gone(t, v1.Pid)
	if v := sendVersion(t, c); v.Version != "1.1.0" {
		t.Fatalf("after the refusal %+v answers", v)
	}
	if _, err := c.Upgrade(testCtx(t), "Not A Name"); err == nil {
		t.Fatal("Upgrade accepted an invalid adapter name")
	} else {
		wantCode(t, err, CodeInvalidParams)
	}
}

// Upgrade of a name no directory holds is not_found, as Send of it is; a name the
// directories hold that is not open yet is opened, as its first call would open it.
func TestUpgradeUnknownAdapter(t *testing.T) {
	dir := adapterDir(t)
	installVersion(t, dir, "1.0.0")
	sock := startServer(t, ServerConfig{Dirs: []string{dir}, WatchInterval: time.Hour})
	c := dial(t, sock)
	if _, err := c.Upgrade(testCtx(t), "nosuch"); CodeOf(err) != CodeNotFound {
		t.Errorf("Upgrade(nosuch) = %v, want not_found", err)
	}
	r, err := c.Upgrade(testCtx(t), "upg")
	if err != nil || r == nil || len(r.Adapters) != 1 || r.Adapters[0].Version != "1.0.0" || r.Adapters[0].State != "running" {
		t.Errorf("Upgrade(upg), not open = %+v, %v; want it opened", r, err)
	}
	if _, err := c.Upgrade(testCtx(t), ""); err != nil {
		t.Errorf("Upgrade() = %v, want every open adapter (none)", err)
	}
}
