//go:build linux

package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
)

// A call in flight on 1.0.0 finishes there with its result while 1.1.0 takes every new
// call; 1.0.0's tree is gone once its last call returned; a broken 1.2.0 (an invalid
// catalog) is refused, reported, not tried again, and 1.1.0 keeps serving.
func TestUpgradeTakesOverAndRefusesBroken(t *testing.T) {
	e := newUpgradeEnv(t, func(c *registry.Config) {
		c.Env = []string{"ADAPTERKIT_TEST_MODE_1.2.0=badcatalog"}
	}, "1.0.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	v1 := versionOf(t, h)
	if v1.Version != "1.0.0" {
		t.Fatalf("opened %+v", v1)
	}
	slow := make(chan error, 1)
	var slowRes json.RawMessage
	go func() {
		var err error
		// Long enough to outlast installing, starting and calling 1.1.0 below on a
		// loaded machine: the test checks it is still in flight afterwards.
		slowRes, err = h.Call(ctxT(t), "example.echo.sleep", json.RawMessage(`{"ms":4000}`))
		slow <- err
	}()
	waitFor(t, "the slow call in flight", func() bool { return h.Status().InFlight == 1 })

	e.install(t, "1.1.0", nil)
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	st := h.Upgrades()
	if st.Version != "1.1.0" || st.Upgrades != 1 || st.Err != nil {
		t.Fatalf("after the upgrade: %+v", st)
	}
	if len(st.Draining) != 1 || st.Draining[0].Version != "1.0.0" || st.Draining[0].Pid != v1.Pid || st.Draining[0].InFlight != 1 {
		t.Fatalf("draining: %+v (1.0.0 is pid %d)", st.Draining, v1.Pid)
	}
	if filepath.Base(h.Path()) != "upg_v1.1.0" {
		t.Fatalf("Path = %s", h.Path())
	}
	var v2 versionResult
	for range 20 {
		v2 = versionOf(t, h)
		if v2.Version != "1.1.0" {
			t.Fatalf("a new call reached %+v", v2)
		}
	}
	select {
	case <-slow:
		t.Fatal("the call in flight on 1.0.0 ended before its time")
	default:
	}
	if err := <-slow; err != nil || string(slowRes) != `{"ms":4000}` {
		t.Fatalf("call in flight on 1.0.0 = %s, %v", slowRes, err)
	}
	waitFor(t, "1.0.0 closed", func() bool { return len(h.Upgrades().Draining) == 0 })
	testkit.Gone(t, v1.Pid)

	e.install(t, "1.2.0", nil)
	for range 2 { // the second rescan must not try the same file again
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	st = h.Upgrades()
	var ue *registry.UpgradeError
	if st.Version != "1.1.0" || st.Upgrades != 1 || !errors.As(st.Err, &ue) || !errors.Is(st.Err, proto.ErrInvalidCatalog) || ue.Version != "1.2.0" {
		t.Fatalf("after the broken 1.2.0: %+v", st)
	}
	if got := versionOf(t, h); got != v2 {
		t.Fatalf("after the refusal %+v answers, want %+v", got, v2)
	}
	evs := e.eventList()
	if len(evs) != 2 || evs[0].Err != nil || evs[0].From != "1.0.0" || evs[0].To != "1.1.0" || !errors.Is(evs[1].Err, proto.ErrInvalidCatalog) {
		t.Fatalf("events %+v", evs)
	}
	if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.2.0")); n != 1 {
		t.Fatalf("1.2.0 started %d times, want once", n)
	}
	// A new file at the same path is a new candidate: tried again.
	_ = os.Remove(filepath.Join(e.dir, "upg_v1.2.0"))
	e.install(t, "1.2.0", []byte("changed"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.2.0")); n != 2 {
		t.Fatalf("1.2.0 started %d times after it changed, want twice", n)
	}
}

// A file still being written is not started: its size keeps changing over the settle
// interval. Once complete and still, it is.
func TestUpgradeWaitsForHalfWrittenFile(t *testing.T) {
	e := newUpgradeEnv(t, func(c *registry.Config) { c.Upgrade.Settle = 200 * time.Millisecond }, "1.0.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(e.dir, "upg_v1.1.0")
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	// The writer copies slowly, as a copy over a network would: a chunk every 20 ms
	// (well inside the 200 ms settle interval) until the rescans below are done.
	stopWriting := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		chunk := len(b) / 400
		off := 0
		for ; off+chunk < len(b); off += chunk {
			if _, err := f.Write(b[off : off+chunk]); err != nil {
				written <- err
				return
			}
			select {
			case <-stopWriting:
				_, err := f.Write(b[off+chunk:])
				written <- errors.Join(err, f.Close())
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		_, err := f.Write(b[off:])
		written <- errors.Join(err, f.Close())
	}()
	for range 3 {
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	close(stopWriting)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if n := countOf(e.started(), dst); n != 0 || len(e.eventList()) != 0 || h.Upgrades().Version != "1.0.0" {
		t.Fatalf("half-written file: started %d times, events %+v, status %+v", n, e.eventList(), h.Upgrades())
	}
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := h.Upgrades(); st.Version != "1.1.0" || st.Err != nil || versionOf(t, h).Version != "1.1.0" {
		t.Fatalf("complete file: %+v", st)
	}
}

// The catalog check (and the pin) decide: with typed clients bound, their contracts;
// with none, every service and method of the serving version.
func TestUpgradeChecksContracts(t *testing.T) {
	withSleep := contract.NewService("example.echo", 1)
	contract.NewMethod[sleepArgs, sleepArgs](withSleep, "sleep")
	contract.NewMethod[map[string]any, map[string]any](withSleep, "echo")
	echoOnly := contract.NewService("example.echo", 1)
	contract.NewMethod[map[string]any, map[string]any](echoOnly, "echo")
	for _, tc := range []struct {
		name  string
		bind  *contract.Service
		taken bool
		cause error
	}{
		{"bound client uses the dropped method", withSleep, false, registry.ErrMethodMissing},
		{"no client: every method of the serving version", nil, false, registry.ErrMethodMissing},
		{"bound client does not use it", echoOnly, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUpgradeEnv(t, func(c *registry.Config) { c.Env = []string{"ADAPTERKIT_TEST_MODE_1.1.0=nosleep"} }, "1.0.0")
			h, err := e.reg.Open(ctxT(t), "upg", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.bind != nil {
				if _, err := registry.NewClient(h, tc.bind); err != nil {
					t.Fatal(err)
				}
			}
			e.install(t, "1.1.0", nil)
			if err := e.reg.Rescan(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			st := h.Upgrades()
			if tc.taken {
				if st.Version != "1.1.0" || st.Err != nil {
					t.Fatalf("not taken: %+v", st)
				}
				return
			}
			var be *registry.BindError
			if st.Version != "1.0.0" || !errors.Is(st.Err, tc.cause) || !errors.As(st.Err, &be) || be.Detail != "example.echo.sleep" {
				t.Fatalf("want refused for %v: %+v", tc.cause, st)
			}
			if _, err := h.Call(ctxT(t), "example.echo.sleep", json.RawMessage(`{"ms":1}`)); err != nil {
				t.Fatalf("1.0.0 no longer serves: %v", err)
			}
		})
	}
}

// A pinned adapter upgrades only to a file whose digest is allowed for its name.
func TestUpgradeHonoursPins(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		t.Fatal(err)
	}
	good := append(slices.Clone(b), "good"...)
	sum := sha256.Sum256(good)
	allowed := hex.EncodeToString(sum[:])
	e := newUpgradeEnv(t, func(c *registry.Config) { c.Upgrade.Allowed = map[string][]string{"upg": {plainDigest(t), allowed}} }, "1.0.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.install(t, "1.1.0", []byte("evil"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := h.Upgrades(); st.Version != "1.0.0" || !errors.Is(st.Err, discovery.ErrDigestMismatch) {
		t.Fatalf("unallowed digest: %+v", st)
	}
	if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.1.0")); n != 0 {
		t.Fatalf("a file whose digest is not allowed was started %d times", n)
	}
	e.install(t, "1.2.0", []byte("good"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := h.Upgrades(); st.Version != "1.2.0" || st.Err != nil {
		t.Fatalf("allowed digest: %+v", st)
	}
}

// A file pinned by its path ahead of time is taken when it matches its pin, and refused
// when it does not, whether the adapter is pinned or not.
func TestUpgradePinnedByPath(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(adapterDir, testkit.Versioned.Name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(slices.Clone(b), "good"...))
	e := newUpgradeEnv(t, func(c *registry.Config) {
		c.Pins = map[string]string{
			filepath.Join(c.Dirs[0], "upg_v1.1.0"): hex.EncodeToString(sum[:]),
			filepath.Join(c.Dirs[0], "upg_v1.2.0"): hex.EncodeToString(sum[:]),
		}
	}, "1.0.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.install(t, "1.1.0", []byte("good"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := h.Upgrades(); st.Version != "1.1.0" || st.Err != nil {
		t.Fatalf("pinned path, matching: %+v", st)
	}
	e.install(t, "1.2.0", []byte("evil"))
	if err := e.reg.Rescan(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := h.Upgrades(); st.Version != "1.1.0" || !errors.Is(st.Err, discovery.ErrDigestMismatch) {
		t.Fatalf("pinned path, not matching: %+v", st)
	}
}

// Upgrades compose with restarts and with the directory changing under them.
func TestUpgradeComposes(t *testing.T) {
	t.Run("two versions at once: the newest, once", func(t *testing.T) {
		e := newUpgradeEnv(t, nil, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.install(t, "1.1.0", nil)
		e.install(t, "1.2.0", nil)
		for range 2 {
			if err := e.reg.Rescan(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		if st := h.Upgrades(); st.Version != "1.2.0" || st.Upgrades != 1 {
			t.Fatalf("%+v", st)
		}
		if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.1.0")); n != 0 {
			t.Fatalf("1.1.0 started %d times", n)
		}
	})
	t.Run("new version exits before its handshake", func(t *testing.T) {
		e := newUpgradeEnv(t, func(c *registry.Config) { c.Env = []string{"ADAPTERKIT_TEST_MODE_1.1.0=exit"} }, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.install(t, "1.1.0", nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		var oe *lifecycle.OpenError
		if st := h.Upgrades(); st.Version != "1.0.0" || !errors.As(st.Err, &oe) || oe.Stage != lifecycle.StageHandshake {
			t.Fatalf("%+v", st)
		}
		if v := versionOf(t, h); v.Version != "1.0.0" {
			t.Fatalf("%+v answers", v)
		}
	})
	t.Run("upgrade during a restart backoff", func(t *testing.T) {
		e := newUpgradeEnv(t, func(c *registry.Config) {
			c.Restart = lifecycle.RestartPolicy{MaxRestarts: 3, Backoff: time.Minute}
		}, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		v1 := versionOf(t, h)
		if err := syscall.Kill(v1.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "1.0.0 to be restarting", func() bool { return !h.Status().Running })
		// A call made now waits for the restart, a minute away: the upgrade takes it.
		waiting := make(chan string, 1)
		go func() {
			raw, err := h.Call(ctxT(t), "example.echo.version", nil)
			waiting <- fmt.Sprintf("%s %v", raw, err)
		}()
		e.install(t, "1.1.0", nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if got := <-waiting; !strings.HasPrefix(got, `{"version":"1.1.0"`) {
			t.Fatalf("the waiting call got %s", got)
		}
		waitFor(t, "1.0.0 closed", func() bool { return len(h.Upgrades().Draining) == 0 })
		if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.0.0")); n != 1 {
			t.Fatalf("1.0.0 restarted after it was replaced (%d starts)", n)
		}
	})
	t.Run("old version crashes while it drains", func(t *testing.T) {
		e := newUpgradeEnv(t, func(c *registry.Config) {
			c.Restart = lifecycle.RestartPolicy{MaxRestarts: 3, Backoff: time.Millisecond}
		}, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		v1 := versionOf(t, h)
		slow := make(chan error, 1)
		go func() {
			_, err := h.Call(ctxT(t), "example.echo.sleep", json.RawMessage(`{"ms":20000}`))
			slow <- err
		}()
		waitFor(t, "the slow call in flight", func() bool { return h.Status().InFlight == 1 })
		e.install(t, "1.1.0", nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(v1.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The call in flight fails as the process died (uncertain: it was sent); the
		// old version is closed, not restarted, and 1.1.0 serves on.
		if err := <-slow; err == nil || !runtime.IsUncertain(err) {
			t.Fatalf("call in flight on the crashed 1.0.0: %v", err)
		}
		waitFor(t, "1.0.0 closed", func() bool { return len(h.Upgrades().Draining) == 0 })
		if v := versionOf(t, h); v.Version != "1.1.0" {
			t.Fatalf("%+v answers", v)
		}
		if n := countOf(e.started(), filepath.Join(e.dir, "upg_v1.0.0")); n > 2 {
			t.Fatalf("the replaced 1.0.0 was started %d times", n)
		}
	})
	t.Run("old file deleted while it runs", func(t *testing.T) {
		e := newUpgradeEnv(t, nil, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(e.dir, "upg_v1.0.0")); err != nil {
			t.Fatal(err)
		}
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if v := versionOf(t, h); v.Version != "1.0.0" {
			t.Fatalf("%+v answers", v)
		}
		if !errors.Is(e.reg.Reservations().CanRelease(e.dir), lifecycle.ErrReserved) {
			t.Fatal("the package directory of a running adapter whose file is gone is not reserved")
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.reg.Reservations().CanRelease(e.dir); err != nil {
			t.Fatalf("after Close: %v", err)
		}
	})
	t.Run("opened by path: never follows", func(t *testing.T) {
		e := newUpgradeEnv(t, nil, "1.0.0")
		h, err := e.reg.Open(ctxT(t), filepath.Join(e.dir, "upg_v1.0.0"), nil)
		if err != nil {
			t.Fatal(err)
		}
		e.install(t, "1.1.0", nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if v := versionOf(t, h); v.Version != "1.0.0" || len(e.eventList()) != 0 {
			t.Fatalf("%+v answers, events %+v", v, e.eventList())
		}
	})
	t.Run("no major version change without a constraint", func(t *testing.T) {
		e := newUpgradeEnv(t, nil, "1.0.0")
		h, err := e.reg.Open(ctxT(t), "upg", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.install(t, "2.0.0", nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if v := versionOf(t, h); v.Version != "1.0.0" || len(e.eventList()) != 0 {
			t.Fatalf("%+v answers, events %+v", v, e.eventList())
		}
	})
}

// Under load from 16 callers, upgrade after upgrade loses no call and leaves no
// process: every call returns its own params, and every replaced version's process is
// gone once it drained.
func TestUpgradeUnderLoad(t *testing.T) {
	const callers, upgrades = 16, 20
	e := newUpgradeEnv(t, func(c *registry.Config) { c.Upgrade.Settle = time.Millisecond }, "1.0.0")
	h, err := e.reg.Open(ctxT(t), "upg", nil)
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{versionOf(t, h).Pid}
	ctx, stop := context.WithCancel(ctxT(t))
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	var calls [callers]int
	for i := range callers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				want := fmt.Sprintf(`{"caller":%d,"n":%d}`, i, n)
				got, err := h.Call(context.Background(), "example.echo.echo", json.RawMessage(want))
				if err != nil || string(got) != want {
					errs <- fmt.Errorf("caller %d call %d: %s, %v", i, n, got, err)
					return
				}
				calls[i]++
			}
		})
	}
	for i := 1; i <= upgrades; i++ {
		ver := fmt.Sprintf("1.%d.0", i)
		e.install(t, ver, nil)
		if err := e.reg.Rescan(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		v := versionOf(t, h)
		if v.Version != ver {
			t.Fatalf("upgrade %d: %+v answers (%+v)", i, v, h.Upgrades())
		}
		pids = append(pids, v.Pid)
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for _, n := range calls {
		if n == 0 {
			t.Error("a caller made no call")
		}
		total += n
	}
	t.Logf("%d calls by %d callers across %d upgrades", total, callers, upgrades)
	waitFor(t, "every replaced version closed", func() bool { return len(h.Upgrades().Draining) == 0 })
	if st := h.Upgrades(); st.Upgrades != upgrades || st.Err != nil {
		t.Fatalf("%+v", st)
	}
	testkit.Gone(t, pids[:len(pids)-1]...)
}
