package main

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestSteadyLoop(t *testing.T) {
	tests := []struct {
		name      string
		d, call   time.Duration
		failAt    int // the call that fails (1-based); 0: none
		wantCalls int
		wantEl    time.Duration
	}{
		{"calls until the duration has passed", 10 * time.Millisecond, time.Millisecond, 0, 10, 10 * time.Millisecond},
		{"the last call may end after it", 10 * time.Millisecond, 3 * time.Millisecond, 0, 4, 12 * time.Millisecond},
		{"one call longer than the duration", time.Millisecond, 5 * time.Millisecond, 0, 1, 5 * time.Millisecond},
		{"stops at an error", 10 * time.Millisecond, time.Millisecond, 3, 2, 2 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: time.Unix(1e9, 0)}
			invoked := 0
			boom := errors.New("boom")
			lat := newSampler(maxSamples)
			calls, el, err := steadyLoop(c.now, tt.d, func() error {
				invoked++
				c.advance(tt.call)
				if invoked == tt.failAt {
					return boom
				}
				return nil
			}, lat)
			if tt.failAt != 0 && !errors.Is(err, boom) || tt.failAt == 0 && err != nil {
				t.Errorf("err = %v", err)
			}
			if calls != tt.wantCalls || el != tt.wantEl {
				t.Errorf("calls %d in %v, want %d in %v", calls, el, tt.wantCalls, tt.wantEl)
			}
			if len(lat.xs) != calls {
				t.Errorf("%d latency samples for %d calls", len(lat.xs), calls)
			}
			for _, x := range lat.xs {
				if x != us(tt.call) {
					t.Errorf("latency sample %v µs, want %v", x, us(tt.call))
				}
			}
		})
	}
}

// TestSteadyCallers checks on the real clock that concurrent callers' calls are all
// counted, each with its latency sample, and that the pooled time covers the duration.
func TestSteadyCallers(t *testing.T) {
	const d = 20 * time.Millisecond
	for _, callers := range []int{1, 4} {
		var invoked atomic.Int64
		r, err := steadyCallers(time.Now, callers, d, func() error {
			invoked.Add(1)
			time.Sleep(100 * time.Microsecond)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if int64(r.calls) != invoked.Load() || r.calls < callers {
			t.Errorf("%d callers: counted %d calls, %d made", callers, r.calls, invoked.Load())
		}
		if len(r.lat) != r.calls {
			t.Errorf("%d callers: %d latency samples for %d calls", callers, len(r.lat), r.calls)
		}
		if r.elapsed < d {
			t.Errorf("%d callers: elapsed %v, shorter than the duration %v", callers, r.elapsed, d)
		}
	}
	boom := errors.New("boom")
	if _, err := steadyCallers(time.Now, 4, d, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failing call gave %v", err)
	}
}

// TestSampler checks that the reservoir holds at most its cap, counts everything, and
// keeps a sample of the whole stream rather than its beginning or its end.
func TestSampler(t *testing.T) {
	s := newSampler(100)
	for i := range 10000 {
		s.add(float64(i))
	}
	if len(s.xs) != 100 || s.seen != 10000 {
		t.Fatalf("held %d of %d seen, want 100 of 10000", len(s.xs), s.seen)
	}
	sorted := slices.Sorted(slices.Values(s.xs))
	if len(slices.Compact(sorted)) != 100 {
		t.Error("a sample was kept twice")
	}
	mean := 0.0
	for _, x := range s.xs {
		mean += x / 100
	}
	// The stream's mean is 4999.5; a uniform sample of 100 has a standard error of
	// about 290 (the seed is fixed, so this is deterministic).
	if mean < 3500 || mean > 6500 {
		t.Errorf("sample mean %v: not a uniform sample of 0..9999", mean)
	}
	small := newSampler(10)
	for i := range 5 {
		small.add(float64(i))
	}
	if !slices.Equal(small.xs, []float64{0, 1, 2, 3, 4}) {
		t.Errorf("below the cap every sample is kept in order, got %v", small.xs)
	}
}

func TestSelectWorkloads(t *testing.T) {
	tests := []struct {
		list, mode string
		want       []string
	}{
		{"rtt,spawn", modeBoth, []string{"spawn", "rtt", "rtt-steady"}},
		{"rtt,spawn", modeBlock, []string{"spawn", "rtt"}},
		{"big,par32,regmem", modeSteady, []string{"par32-steady", "big-steady", "regmem"}},
		{"rtt-steady,par32", modeBlock, []string{"rtt-steady", "par32"}},
	}
	for _, tt := range tests {
		got, err := selectWorkloads(tt.list, tt.mode)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("selectWorkloads(%q, %q) = %v, %v; want %v", tt.list, tt.mode, got, err, tt.want)
		}
	}
	if _, err := selectWorkloads("rtt", "sometimes"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if _, err := selectWorkloads("rtt-steady-steady", modeBoth); err == nil {
		t.Error("an unknown workload was accepted")
	}
}

func TestTakesPart(t *testing.T) {
	for _, wl := range workloadNames() {
		want := wl == "rtt" || wl == "rtt-steady"
		if got := takesPart(sysPingpong, wl); got != want {
			t.Errorf("pingpong takes part in %s: %v, want %v", wl, got, want)
		}
	}
	for _, s := range knownSystems {
		want := s == sysAdapterkit || s == sysSandbox
		if got := takesPart(s, "regmem"); got != want {
			t.Errorf("%s takes part in regmem: %v, want %v", s, got, want)
		}
	}
}
