//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
)

// A broken newer version (it exits at start) that the live upgrade refused is not
// served after `adapterctl serve` restarts with the same state directory: the version
// that served before serves again, `adapterctl status` says which file was refused,
// when, why and what serves, and a call by the refused version is refused without
// starting it.
func TestServeRestartServesLastGood(t *testing.T) {
	root := t.TempDir()
	dir, staging, state := filepath.Join(root, "adapters"), filepath.Join(root, "staging"), filepath.Join(root, "state")
	for _, d := range []string{dir, staging} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.ReadFile(buildBinT(t, "e2e/cmd/versioned"))
	if err != nil {
		t.Fatal(err)
	}
	install := func(ver string) {
		p := filepath.Join(staging, "upg_v"+ver)
		if err := os.WriteFile(p, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		mv(t, p, dir)
	}
	env := []string{"ADAPTERKIT_TEST_MODE_1.2.0=exit"}
	install("1.1.0")
	d := startDaemon(t, dir, env, "--state-dir", state)
	if v := d.version(t, "upg"); v.Version != "1.1.0" {
		t.Fatalf("opened %+v", v)
	}
	install("1.2.0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := d.c.Upgrade(ctx, "upg")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 || r.Adapters[0].Version != "1.1.0" || r.Adapters[0].UpgradeError == "" {
		t.Fatalf("the broken 1.2.0 was not refused: %+v", r.Adapters)
	}
	d.stop(t)

	// As systemd's Restart= or a reboot would.
	d = startDaemon(t, dir, env, "--state-dir", state)
	out, err := exec.Command(buildBinT(t, "cmd/adapterctl"), "status", "--socket", d.sock).CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`upg 1\.2\.0 refused at [0-9TZ:-]+: .*; serving 1\.1\.0 `).Match(out) {
		t.Fatalf("status after the restart does not say why 1.2.0 is not served:\n%s", out)
	}
	if v := d.version(t, "upg"); v.Version != "1.1.0" {
		t.Fatalf("after the restart %+v serves", v)
	}
	if _, err := d.c.Send(ctx, controlplane.SendParams{Adapter: "upg@1.2.0", Method: "example.echo.version"}); err == nil || !regexp.MustCompile(`refused at`).MatchString(err.Error()) {
		t.Fatalf("Send upg@1.2.0 after the restart: %v", err)
	}
}
