package lifecycle

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histBuckets is the number of latency buckets: four per power of two of
// microseconds, from under 1 µs to about 38 hours (the last bucket takes the rest).
const histBuckets = 144

// histPage is how many buckets are allocated together, on the first duration that
// falls into one of them: a method's durations span a few powers of two, so most of
// its histogram's pages stay unallocated.
const histPage = 16

// The pages cover the buckets exactly.
var _ [0]struct{} = [histBuckets % histPage]struct{}{}

// histogram counts durations in fixed, log-linear buckets: a quantile read from it is
// within 12.5% of the true value, at a bounded size whatever the number of samples. It
// also totals the durations, so that a mean (or a Prometheus histogram's sum) is exact.
type histogram struct {
	pages [histBuckets / histPage]atomic.Pointer[[histPage]atomic.Uint64]
	sum   atomic.Int64 // nanoseconds
}

// bucketOf returns the bucket of a duration of us microseconds: 0..3 for 0..3 µs, then
// four buckets per power of two.
func bucketOf(us uint64) int {
	if us < 4 {
		return int(us)
	}
	e := bits.Len64(us) - 3 // us>>e is in [4, 7]
	i := 4*e + int(us>>e)
	if i >= histBuckets {
		return histBuckets - 1
	}
	return i
}

// bucketBounds returns a bucket's range in microseconds, [lo, hi).
func bucketBounds(i int) (lo, hi uint64) {
	if i < 4 {
		return uint64(i), uint64(i) + 1
	}
	e := uint(i/4 - 1)
	m := uint64(i%4 + 4)
	return m << e, (m + 1) << e
}

func (h *histogram) observe(d time.Duration) {
	us := uint64(0)
	if d > 0 {
		us = uint64(d / time.Microsecond)
		h.sum.Add(int64(d))
	}
	i := bucketOf(us)
	slot := &h.pages[i/histPage]
	page := slot.Load()
	if page == nil {
		page = new([histPage]atomic.Uint64)
		if !slot.CompareAndSwap(nil, page) {
			page = slot.Load() // another caller's came first
		}
	}
	page[i%histPage].Add(1)
}

// snapshot reads the histogram once.
func (h *histogram) snapshot() Latency {
	var l Latency
	for p := range h.pages {
		page := h.pages[p].Load()
		if page == nil {
			continue
		}
		for j := range page {
			c := page[j].Load()
			l.counts[p*histPage+j] = c
			l.Count += c
		}
	}
	l.Sum = time.Duration(h.sum.Load())
	return l
}

// quantile returns the q-quantile of the durations observed (see Latency.quantile).
func (h *histogram) quantile(q float64) time.Duration {
	l := h.snapshot()
	return l.quantile(q)
}

// Latency is a snapshot of one method's latency histogram: fixed log-linear buckets,
// four per power of two of microseconds, whose bounds are the whole numbers of
// microseconds n·2^k with n in 4…7 (and 1, 2, 3 µs). Every power of two of
// microseconds is a bound.
type Latency struct {
	// Count is the number of calls observed.
	Count uint64
	// Sum is their total duration (exact, not derived from the buckets).
	Sum    time.Duration
	counts [histBuckets]uint64
}

// CountUnder returns how many of the calls took less than d. It is exact when d is a
// bucket bound (e.g. any power of two of microseconds); otherwise d is rounded down
// to the nearest bound below it, so calls between that bound and d are not counted.
func (l *Latency) CountUnder(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	us := uint64(d / time.Microsecond)
	var n uint64
	for i, c := range l.counts {
		if _, hi := bucketBounds(i); hi > us || i == histBuckets-1 {
			break
		}
		n += c
	}
	return n
}

// quantile returns the q-quantile (0 < q <= 1) of the durations observed: the middle
// of the bucket holding it (within 12.5% of the true value). 0 when nothing was
// observed.
func (l *Latency) quantile(q float64) time.Duration {
	if l.Count == 0 {
		return 0
	}
	rank := uint64(q*float64(l.Count) + 0.999999)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range l.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			return time.Duration(lo+hi) * time.Microsecond / 2
		}
	}
	return 0
}
