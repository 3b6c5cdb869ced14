package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// installVersioned puts the versioned test adapter in a directory of its own as
// NAME_vVERSION and returns the directory and the file's path.
func installVersioned(t *testing.T, name, ver string) (string, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(adapterDir, exe(testkit.Versioned.Name)))
	if err != nil {
		t.Fatal(err)
	}
	dir := testkit.TempDir(t)
	path := filepath.Join(dir, exe(name+"_v"+ver))
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// An adapter that exits during initialize, opened and called by ten callers for 5 s
// as the daemon does (a failed open is not kept: the next call opens again), is
// started on the backoff schedule, not at every call: the trial that found it started
// it 5,171 times in 60 s; the target is at most 30 in 60 s. Opens meanwhile fail at once
// with the typed error, which carries the last failure.
func TestBackoffCrashLoopStartsBounded(t *testing.T) {
	dir, path := installVersioned(t, "crashy", "1.0.0")
	var starts atomic.Int64
	r := registry.New(&registry.Config{Dirs: []string{dir}, Env: []string{"ADAPTERKIT_TEST_MODE_1.0.0=exit"},
		Observer: &lifecycle.Observer{ProcessStart: func(lifecycle.ProcessInfo) { starts.Add(1) }}})
	defer func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("registry Close: %v", err)
		}
	}()
	const window = 5 * time.Second
	end := time.Now().Add(window)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			every := time.NewTicker(20 * time.Millisecond) // the trial's callers came every 13-48 ms
			defer every.Stop()
			for ; time.Now().Before(end); <-every.C {
				h, err := r.Open(ctxT(t), "crashy", nil)
				if err == nil {
					t.Error("the crashing adapter opened")
					_ = h.Close()
					return
				}
				var be *lifecycle.BackoffError
				var oe *lifecycle.OpenError
				switch {
				case errors.As(err, &be):
					if be.Failures < 1 || be.Retry <= 0 || !errors.Is(err, wire.ProcessExited) {
						t.Errorf("open refused by the backoff: %v", err)
					}
					refused.Add(1)
				case !errors.As(err, &oe) || oe.Stage != lifecycle.StageHandshake:
					t.Errorf("open: %v", err)
				}
			}
		})
	}
	wg.Wait()
	// The ten first Opens, made at once, each start it (their failures step the backoff
	// once); then one start at 0.1, 0.3, 0.7, 1.5, 3.1 s (each step up to a fifth
	// shorter, plus the starts themselves): 15 starts in 5 s. Where starts are slow (a
	// loaded machine, Wine) an open of the first burst may come after a failure and a
	// step may be taken late, so up to 20 are allowed; without backoff there were 821.
	// (The daemon opens an adapter once for all its callers: there, the first start is
	// one.)
	n := starts.Load()
	if n < 6 || n > 20 {
		t.Fatalf("%d starts in %v", n, window)
	}
	if refused.Load() == 0 {
		t.Fatal("no open was refused by the backoff")
	}
	st := r.Starts(path)
	if st.Starts != uint64(n) || st.Failed != uint64(n) || st.Failures < 2 || st.Failures > int(n) || !errors.Is(st.LastError, wire.ProcessExited) {
		t.Errorf("registry's start record: %+v", st)
	}
}

// A default registry host serves again within seconds after its adapter's slots were
// all abandoned by callers that gave up on handlers ignoring cancellation: the adapter
// is restarted after the disconnect grace (its tree verified gone), though the default
// restart policy allows no restarts.
func TestWedgedAbandonedSlotsDefaultRegistry(t *testing.T) {
	dir, _ := installVersioned(t, "deaf", "1.0.0")
	r := registry.New(&registry.Config{Dirs: []string{dir}, Env: []string{"ADAPTERKIT_TEST_MODE_1.0.0=deaf"}})
	defer func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("registry Close: %v", err)
		}
	}()
	h, err := r.Open(ctxT(t), "deaf", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := h.Status().Pid
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if _, err := h.Call(ctx, "example.echo.sleep", []byte(`{"ms":600000}`)); !runtime.IsUncertain(err) {
				t.Errorf("deaf call: %v", err)
			}
		})
	}
	wg.Wait()
	gaveUp := time.Now()
	if st := h.Stats(); st.Abandoned != 32 || st.InFlight != 0 || h.Status().InFlight != 32 {
		t.Fatalf("%d abandoned, %d in flight (%d on the connection)", st.Abandoned, st.InFlight, h.Status().InFlight)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = h.Call(ctx, "example.echo.echo", []byte(`{}`))
	cancel()
	var we *lifecycle.WedgedError
	if !errors.As(err, &we) || we.Slots != 32 || !errors.Is(err, context.DeadlineExceeded) || !runtime.IsNeverStarted(err) {
		t.Fatalf("call with every slot abandoned: %v", err)
	}
	// Calls keep coming, each giving up after a second, until one is served again.
	if !testkit.Within(15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = h.Call(ctx, "example.echo.echo", []byte(`{}`))
		if err != nil && !errors.As(err, &we) {
			t.Fatalf("call while wedged: %v", err)
		}
		return err == nil
	}) {
		t.Fatalf("not serving %v after every slot was abandoned: %v", time.Since(gaveUp), err)
	}
	if took := time.Since(gaveUp); took < 5*time.Second-time.Second {
		t.Errorf("restarted %v after the callers gave up, before the disconnect grace", took)
	}
	testkit.Gone(t, first)
	st := h.Stats()
	if h.Status().Pid == first || st.Abandoned != 0 || st.Restarts != 1 || st.LastExit == nil || !errors.As(st.LastExit.Cause, &we) {
		t.Fatalf("after the restart: pid %d (was %d), %d abandoned, %d restarts, last exit %+v", h.Status().Pid, first, st.Abandoned, st.Restarts, st.LastExit)
	}
}
