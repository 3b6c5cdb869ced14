package lifecycle_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func init() {
	observeModes["exitsoon"] = exitSoon
	observeModes["deaf"] = serveDeaf
}

// exitSoon answers initialize, then exits at the first call, or 100 ms later.
func exitSoon() {
	time.AfterFunc(100*time.Millisecond, func() { os.Exit(4) })
	svc := plugin.NewService("test.proc", 1)
	plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { os.Exit(4); return empty{}, nil })
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}

// serveDeaf serves test.proc.deaf, which ignores cancellation and never returns, and
// test.proc.ok.
func serveDeaf() {
	svc := plugin.NewService("test.proc", 1)
	plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { return empty{}, nil })
	plugin.Handle(svc, "test.proc.deaf", func(context.Context, empty) (empty, error) { select {} })
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}

// An adapter that ends soon after every start is restarted on the backoff schedule
// however many callers call it, and calls during the backoff fail at once with the
// typed error, carrying the last failure.
func TestBackoffRestartsOfAdapterEndingAfterStart(t *testing.T) {
	var starts atomic.Int64
	obs := &lifecycle.Observer{ProcessStart: func(lifecycle.ProcessInfo) { starts.Add(1) }}
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("exitsoon"), Name: "flaky", Observer: obs},
		lifecycle.RestartPolicy{MaxRestarts: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const window = 3 * time.Second
	var mu sync.Mutex
	var backoffs int
	var slowest time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(window)
	for range 10 {
		wg.Go(func() {
			every := time.NewTicker(20 * time.Millisecond) // each caller calls every 20 ms
			defer every.Stop()
			for ; time.Now().Before(end); <-every.C {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				began := time.Now()
				_, err := s.Call(ctx, "test.proc.ok", nil)
				took := time.Since(began)
				cancel()
				var be *lifecycle.BackoffError
				if errors.As(err, &be) {
					if !runtime.IsNeverStarted(err) || !errors.Is(err, wire.ProcessExited) || be.Failures < 2 {
						t.Errorf("call during the backoff: %v", err)
					}
					mu.Lock()
					backoffs++
					slowest = max(slowest, took)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	// From 0: ends at once, then restarts after 0.1, 0.2, 0.4, 0.8, 1.6 s (each plus the
	// start): at most 7 starts in 3 s, however many callers.
	if n := starts.Load(); n < 3 || n > 7 {
		t.Fatalf("%d starts in %v", n, window)
	}
	if backoffs == 0 {
		t.Fatal("no call failed with a *lifecycle.BackoffError")
	}
	if slowest > 500*time.Millisecond {
		t.Errorf("a call refused by the backoff took %v", slowest)
	}
	// The loop may be restarting it in the background: after Close every start is
	// counted, the one Close gave up included.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Backoff.Failures < 2 || st.Backoff.Failed < 2 || st.Backoff.Starts != uint64(starts.Load()) || st.Backoff.LastError == nil {
		t.Errorf("stats: %+v", st.Backoff)
	}
}

// A supervisor whose adapter's slots are all held by calls whose callers gave up
// says so to the next call, counts them in Stats, and restarts the adapter once the
// grace has passed: the tree is verified gone and a new call succeeds.
func TestWedgedAdapterRestarted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   time.Duration
		restart bool
	}{
		{"restarted", 300 * time.Millisecond, true},
		{"off", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const slots = 4
			s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("deaf"), Limits: limitsInFlight(slots)},
				lifecycle.RestartPolicy{WedgedAfter: tc.after})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			first := s.Current().Pid()
			for range slots {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				if _, err := s.Call(ctx, "test.proc.deaf", nil); !runtime.IsUncertain(err) {
					t.Fatalf("deaf call: %v", err)
				}
				cancel()
			}
			if st := s.Stats(); st.Abandoned != slots || st.InFlight != 0 {
				t.Fatalf("stats: %d abandoned, %d in flight; want %d, 0", st.Abandoned, st.InFlight, slots)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, err = s.Call(ctx, "test.proc.ok", nil)
			cancel()
			var we *lifecycle.WedgedError
			if !errors.As(err, &we) || we.Slots != slots || !errors.Is(err, context.DeadlineExceeded) || !runtime.IsNeverStarted(err) {
				t.Fatalf("call with every slot abandoned: %v", err)
			}
			time.Sleep(max(tc.after, 300*time.Millisecond) + 50*time.Millisecond)
			wait := 5 * time.Second
			if !tc.restart {
				wait = 200 * time.Millisecond
			}
			ctx, cancel = context.WithTimeout(context.Background(), wait)
			defer cancel()
			_, err = s.Call(ctx, "test.proc.ok", nil)
			if !tc.restart {
				if !errors.As(err, &we) {
					t.Fatalf("call to a wedged adapter not restarted: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("call after the grace: %v", err)
			}
			goneNow(t, first)
			st := s.Stats()
			if st.Restarts != 1 || st.Abandoned != 0 || st.LastExit == nil || !errors.As(st.LastExit.Cause, &we) || st.LastExit.Cleanup != nil {
				t.Fatalf("stats after the restart: %d restarts, %d abandoned, last exit %+v", st.Restarts, st.Abandoned, st.LastExit)
			}
		})
	}
}

func limitsInFlight(n int) *limits.Limits { return &limits.Limits{MaxInFlight: n} }
