package lifecycle

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// The histogram's quantiles are within 12.5% of the true ones.
func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Fatal("empty histogram has a quantile")
	}
	for i := 1; i <= 1000; i++ {
		h.observe(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {0.01, 10 * time.Millisecond}} {
		got := h.quantile(c.q)
		if diff := float64(got-c.want) / float64(c.want); diff < -0.125 || diff > 0.125 {
			t.Errorf("q%v = %v, want %v within 12.5%%", c.q, got, c.want)
		}
	}
	for us := uint64(0); us < 1<<20; us = us*3/2 + 1 {
		lo, hi := bucketBounds(bucketOf(us))
		if us < lo || us >= hi {
			t.Fatalf("%d µs in bucket [%d, %d)", us, lo, hi)
		}
	}
}

// A histogram allocates only the pages of buckets that durations fell into, and
// concurrent first observations of a page all count.
func TestHistogramPages(t *testing.T) {
	var h histogram
	const n, each = 8, 500
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h.observe(time.Duration(40+i%20) * time.Microsecond) // 40-59 µs: one page
			}
		}()
	}
	wg.Wait()
	pages := 0
	for i := range h.pages {
		if h.pages[i].Load() != nil {
			pages++
		}
	}
	if l := h.snapshot(); pages != 1 || l.Count != n*each {
		t.Fatalf("%d pages allocated, %d durations counted; want 1 and %d", pages, l.Count, n*each)
	}
}

// Per-call cost of the figures kept for every call (no observer).
func BenchmarkCallFigures(b *testing.B) {
	o := newObserved("alpha", &Config{})
	params := json.RawMessage(`{"probe":"inlet"}`)
	res := json.RawMessage(`{"celsius":21.5}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t := o.begin("example.device.read", params)
			o.end(ctx, t, "example.device.read", res, nil)
		}
	})
}

// The same from one goroutine (no contention on the counters).
func BenchmarkCallFiguresSerial(b *testing.B) {
	o := newObserved("alpha", &Config{})
	params := json.RawMessage(`{"probe":"inlet"}`)
	res := json.RawMessage(`{"celsius":21.5}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		t := o.begin("example.device.read", params)
		o.end(ctx, t, "example.device.read", res, nil)
	}
}

// Latency counts exactly the durations under a bucket bound and totals them exactly:
// what a Prometheus histogram exported from it needs.
func TestLatencyCountUnder(t *testing.T) {
	var h histogram
	durs := []time.Duration{0, 3 * time.Microsecond, 63 * time.Microsecond, 64 * time.Microsecond,
		100 * time.Microsecond, 127*time.Microsecond + 999, 128 * time.Microsecond, 5 * time.Millisecond, 40 * time.Second}
	var sum time.Duration
	for _, d := range durs {
		h.observe(d)
		sum += d
	}
	l := h.snapshot()
	if l.Count != uint64(len(durs)) || l.Sum != sum {
		t.Fatalf("count %d sum %v, want %d and %v", l.Count, l.Sum, len(durs), sum)
	}
	for k := 0; k < 40; k++ {
		bound := time.Duration(1<<k) * time.Microsecond
		var want uint64
		for _, d := range durs {
			if d < bound {
				want++
			}
		}
		if got := l.CountUnder(bound); got != want {
			t.Errorf("CountUnder(%v) = %d, want %d", bound, got, want)
		}
	}
	if got := l.CountUnder(0); got != 0 {
		t.Errorf("CountUnder(0) = %d", got)
	}
}
