//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// upgradesEnv overrides the number of upgrades of TestServeUpgradesUnderLoad (make
// soak sets 20; make test runs a short one).
const upgradesEnv = "ADAPTERKIT_SOAK_UPGRADES"

// daemon is an `adapterctl serve` process of a test.
type daemon struct {
	cmd     *exec.Cmd
	sock    string
	stderr  *testkit.Buffer
	c       *controlplane.Client
	exited  chan error
	stopped bool
}

// stop closes the client and stops the daemon with SIGTERM, requiring exit status 0
// (every adapter verified gone); once.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.stopped {
		return
	}
	d.stopped = true
	if d.c != nil {
		_ = d.c.Close()
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		if err != nil {
			t.Errorf("adapterctl serve: %v\n%s", err, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("adapterctl serve did not stop within 30 s of SIGTERM\n%s", d.stderr.String())
	}
}

// startDaemon runs `adapterctl serve --socket S --state-dir STATE DIR` with env (and
// any further serve arguments) and dials it, with a state directory of the test's
// own; the test's cleanup stops it with SIGTERM and requires exit status 0 (every
// adapter verified gone).
func startDaemon(t *testing.T, dir string, env []string, extra ...string) *daemon {
	t.Helper()
	ctl := buildBinT(t, "cmd/adapterctl")
	sockDir, err := os.MkdirTemp("", "akup")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	d := &daemon{sock: filepath.Join(sockDir, "s"), stderr: new(testkit.Buffer)}
	args := []string{"serve", "--socket", d.sock, "--state-dir", filepath.Join(sockDir, "state")}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	d.cmd = exec.Command(ctl, append(append(args, extra...), dir)...)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.exited = make(chan error, 1)
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() { d.stop(t) })
	var dialErr error
	if testkit.Within(20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		d.c, dialErr = controlplane.Dial(ctx, d.sock)
		return dialErr == nil
	}) {
		return d
	}
	t.Fatalf("adapterctl serve does not answer: %v\n%s", dialErr, d.stderr.String())
	return nil
}

type servedVersion struct {
	Version string `json:"version"`
	Pid     int    `json:"pid"`
}

// version asks the adapter itself which version and process answer.
func (d *daemon) version(t *testing.T, name string) servedVersion {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := d.c.Send(ctx, controlplane.SendParams{Adapter: name, Method: "example.echo.version"})
	if err != nil {
		t.Fatalf("version of %s: %v", name, err)
	}
	var v servedVersion
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// entry returns the Status entry of the adapter name (and the number of its entries).
func (d *daemon) entry(t *testing.T, name string) (controlplane.AdapterStatus, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := d.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var e controlplane.AdapterStatus
	n := 0
	for _, a := range st.Adapters {
		if a.Name == name {
			e, n = a, n+1
		}
	}
	return e, n
}

// mv moves a file with mv(1), as an operator drops a new version in.
func mv(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("mv", from, to).CombinedOutput(); err != nil {
		t.Fatalf("mv: %v: %s", err, out)
	}
}

// `adapterctl serve DIR` with a Python adapter: a new version moved into DIR takes over
// within 15 s by itself (the daemon watches DIR), Status shows it, a new call reaches
// it, and the call in flight on the old version finishes with its result; the old
// version's process is then gone.
func TestServeUpgradePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	root := t.TempDir()
	dir, staging := filepath.Join(root, "adapters"), filepath.Join(root, "staging")
	for _, d := range []string{dir, staging} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := func(ver string) string {
		p := filepath.Join(staging, "pyversion_v"+ver)
		cmd := exec.Command(py, "../sdk/python/tools/build_adapter.py", "testdata/pyversion.py", p)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building pyversion: %v\n%s", err, b)
		}
		return p
	}
	mv(t, build("1.0.0"), dir)
	// 1.1.0 is built before the slow call starts, so that the call's time covers only
	// the take-over (the watcher's settle interval and a Python start, seconds on a
	// loaded machine), not the build.
	built := build("1.1.0")
	d := startDaemon(t, dir, []string{"PATH=" + os.Getenv("PATH")})
	v1 := d.version(t, "pyversion")
	if v1.Version != "1.0.0" {
		t.Fatalf("opened %+v", v1)
	}
	type result struct {
		value json.RawMessage
		err   error
	}
	slow := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		r, err := d.c.Send(ctx, controlplane.SendParams{Adapter: "pyversion", Method: "example.echo.sleep", Params: json.RawMessage(`{"ms":8000}`)})
		if err != nil {
			slow <- result{err: err}
			return
		}
		slow <- result{value: r.Value}
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { e, _ := d.entry(t, "pyversion"); return e.InFlight == 1 },
		"the slow call is not in flight")
	dropped := time.Now()
	mv(t, built, dir)
	var e controlplane.AdapterStatus
	if !testkit.Within(15*time.Second, func() bool {
		var n int
		e, n = d.entry(t, "pyversion")
		if n != 1 {
			t.Fatalf("%d Status entries for pyversion, want one", n)
		}
		return e.Version == "1.1.0"
	}) {
		t.Fatalf("15 s after the mv Status shows %+v\n%s", e, d.stderr.String())
	}
	t.Logf("1.1.0 took over %v after the mv", time.Since(dropped).Round(time.Millisecond))
	if e.Upgrades != 1 || e.UpgradeError != "" || len(e.Draining) != 1 || e.Draining[0].Version != "1.0.0" || e.Draining[0].InFlight != 1 {
		t.Fatalf("Status after the upgrade: %+v", e)
	}
	if v := d.version(t, "pyversion"); v.Version != "1.1.0" || v.Pid == v1.Pid {
		t.Fatalf("a new call reached %+v (1.0.0 was %+v)", v, v1)
	}
	if r := <-slow; r.err != nil || string(r.value) != `{"ms":8000}` {
		t.Fatalf("the call in flight on 1.0.0: %s, %v", r.value, r.err)
	}
	if !testkit.Within(10*time.Second, func() bool { e, _ = d.entry(t, "pyversion"); return len(e.Draining) == 0 }) {
		t.Fatalf("1.0.0 still draining: %+v", e)
	}
	testkit.Gone(t, v1.Pid)
}

// Under load from 16 callers through the daemon, upgrade after upgrade loses no call
// and leaves no process: every Send returns its own params, every replaced version's
// process is gone, and the daemon stops with every tree verified gone.
func TestServeUpgradesUnderLoad(t *testing.T) {
	const callers = 16
	upgrades := 3
	if v := os.Getenv(upgradesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q is not a positive number", upgradesEnv, v)
		}
		upgrades = n
	}
	root := t.TempDir()
	dir, staging := filepath.Join(root, "adapters"), filepath.Join(root, "staging")
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
		if err := os.Rename(p, filepath.Join(dir, "upg_v"+ver)); err != nil {
			t.Fatal(err)
		}
	}
	install("1.0.0")
	d := startDaemon(t, dir, nil)
	pids := []int{d.version(t, "upg").Pid}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	calls := 0
	for i := range callers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				want := fmt.Sprintf(`{"caller":%d,"n":%d}`, i, n)
				cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				r, err := d.c.Send(cctx, controlplane.SendParams{Adapter: "upg", Method: "example.echo.echo", Params: json.RawMessage(want)})
				cancel()
				mu.Lock()
				calls++
				if err != nil || string(r.Value) != want {
					failures = append(failures, fmt.Sprintf("caller %d call %d: %v", i, n, err))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	for i := 1; i <= upgrades; i++ {
		ver := fmt.Sprintf("1.%d.0", i)
		install(ver)
		uctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		r, err := d.c.Upgrade(uctx, "upg")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Adapters) != 1 || r.Adapters[0].Version != ver || r.Adapters[0].UpgradeError != "" {
			t.Fatalf("upgrade %d: %+v", i, r.Adapters)
		}
		v := d.version(t, "upg")
		if v.Version != ver {
			t.Fatalf("upgrade %d: %+v answers", i, v)
		}
		pids = append(pids, v.Pid)
	}
	stop()
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d calls lost: %s", len(failures), calls, strings.Join(failures[:min(len(failures), 5)], "; "))
	}
	t.Logf("%d calls by %d callers across %d upgrades", calls, callers, upgrades)
	var e controlplane.AdapterStatus
	if !testkit.Within(40*time.Second, func() bool { e, _ = d.entry(t, "upg"); return len(e.Draining) == 0 }) {
		t.Fatalf("still draining: %+v", e.Draining)
	}
	if e.Upgrades != upgrades {
		t.Fatalf("Status counts %d upgrades, want %d", e.Upgrades, upgrades)
	}
	testkit.Gone(t, pids[:len(pids)-1]...)
}
