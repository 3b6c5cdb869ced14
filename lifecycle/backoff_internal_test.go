package lifecycle

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

// advance lets d of a synctest bubble's fake time pass for the calling goroutine
// (no real time passes).
func advance(d time.Duration) { <-time.After(d) }

// The start backoff's steps: Backoff doubled per failure, capped, less at most a fifth.
func TestBackoffDelaySchedule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy RestartPolicy
		want   []time.Duration // the step before jitter, per failure count from 1
	}{
		{"defaults", RestartPolicy{}, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
			800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond,
			12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}},
		{"set", RestartPolicy{Backoff: time.Second, MaxBackoff: 3 * time.Second}, []time.Duration{time.Second, 2 * time.Second,
			3 * time.Second, 3 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				for range 50 {
					if d := tc.policy.delay(i + 1); d > want || d < want-want/5 {
						t.Fatalf("delay after %d failures = %v, want within [%v, %v]", i+1, d, want-want/5, want)
					}
				}
			}
		})
	}
}

// A crash loop under fake time: ten callers that each start the adapter whenever the
// record lets them, every start failing at once, start it no more often than the
// schedule allows, and are refused at once with the last failure meanwhile.
func TestBackoffCrashLoopSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Starts
		var p RestartPolicy
		crash := errors.New("exit status 3")
		var mu sync.Mutex
		var starts []time.Duration
		begin := time.Now()
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				for time.Since(begin) < time.Minute {
					gen, err := r.claim(p, "crashy")
					if err == nil {
						mu.Lock()
						starts = append(starts, time.Since(begin))
						mu.Unlock()
						r.failedStart(p, hclog.NewNullLogger(), "crashy", crash, true, gen)
						continue
					}
					var be *BackoffError
					if !errors.As(err, &be) || !errors.Is(err, crash) || be.Failures < 1 || be.Retry <= 0 || be.Retry > 30*time.Second {
						t.Errorf("refused start: %v", err)
						return
					}
					advance(20 * time.Millisecond) // the trial's callers came every 13-48 ms
				}
			})
		}
		wg.Wait()
		// Callers that claim before the first failure is recorded start together (no
		// start has failed yet); fake time stands still meanwhile, so they are the starts
		// at 0. From the last of them the schedule: 0.1, 0.3, 0.7, 1.5, 3.1, 6.3, 12.7,
		// 25.5, 51.1 s, each step up to a fifth shorter (and a caller's 20 ms later): ten
		// starts in a minute.
		first := 0
		for first < len(starts) && starts[first] == 0 {
			first++
		}
		if first == 0 {
			t.Fatalf("no start at once: %v", starts)
		}
		loop := starts[first-1:]
		if len(loop) < 9 || len(loop) > 10 {
			t.Fatalf("%d starts in a minute of a crash loop (after %d at once): %v", len(loop), first, starts)
		}
		for i := 1; i < len(loop); i++ {
			step := 100 * time.Millisecond << (i - 1)
			step = min(step, 30*time.Second)
			if gap := loop[i] - loop[i-1]; gap < step-step/5 {
				t.Errorf("start %d came %v after the one before, the backoff is %v", i+1, gap, step)
			}
		}
		st := r.Stats()
		if st.Starts != uint64(len(starts)) || st.Failed != st.Starts || st.Failures != len(loop) || !errors.Is(st.LastError, crash) || st.RetryAt.IsZero() {
			t.Errorf("stats after the loop: %+v", st)
		}
	})
}

// A start that succeeds resets the backoff: one that served a call at once, one that
// served none once it ran for ResetAfter.
func TestBackoffResetSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Starts
		p := RestartPolicy{ResetAfter: 10 * time.Second}
		for i := range 3 {
			r.failedStart(p, hclog.NewNullLogger(), "x", errors.New("boom"), true, uint64(i))
		}
		if _, err := r.claim(p, "x"); err == nil {
			t.Fatal("no backoff after three failed starts")
		}
		advance(time.Second) // the third step is at most 400 ms
		if _, err := r.claim(p, "x"); err != nil {
			t.Fatalf("refused after the backoff: %v", err)
		}
		a := &Adapter{startedAt: time.Now()}
		r.started()
		if p.settled(a) {
			t.Fatal("a start settled at once")
		}
		r.served(a)
		if st := r.Stats(); st.Failures != 0 || st.LastError != nil || st.Starts != 4 || st.Failed != 3 {
			t.Fatalf("after a served call: %+v", st)
		}
		r.failedStart(p, hclog.NewNullLogger(), "x", errors.New("boom"), true, 4)
		b := &Adapter{startedAt: time.Now()}
		advance(9 * time.Second)
		if p.settled(b) {
			t.Fatal("settled before ResetAfter")
		}
		advance(time.Second)
		if !p.settled(b) {
			t.Fatal("not settled after ResetAfter")
		}
	})
}

// Starts tried at once (ten Opens of an adapter never started) that all fail step the
// backoff once, not ten times: the next start comes after the first step.
func TestBackoffConcurrentStartsStepOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Starts
		var p RestartPolicy
		gens := make([]uint64, 10)
		for i := range gens {
			g, err := r.claim(p, "x")
			if err != nil {
				t.Fatalf("start %d refused: %v", i, err)
			}
			gens[i] = g
		}
		for _, g := range gens {
			r.failedStart(p, hclog.NewNullLogger(), "x", errors.New("boom"), true, g)
		}
		st := r.Stats()
		if st.Starts != 10 || st.Failed != 10 || st.Failures != 1 || time.Until(st.RetryAt) > 100*time.Millisecond {
			t.Fatalf("after ten failed starts at once: %+v (next in %v)", st, time.Until(st.RetryAt))
		}
		advance(100 * time.Millisecond)
		if _, err := r.claim(p, "x"); err != nil {
			t.Fatalf("refused after the first step: %v", err)
		}
	})
}
