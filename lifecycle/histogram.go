package lifecycle

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histBuckets is the number of latency buckets: four per power of two of
// microseconds, from under 1 µs to about 38 hours (the last bucket takes the rest).
const histBuckets = 144

// histogram counts durations in fixed, log-linear buckets: a quantile read from it is
// within 12.5% of the true value, at a fixed size whatever the number of samples.
type histogram struct {
	n [histBuckets]atomic.Uint64
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
	}
	h.n[bucketOf(us)].Add(1)
}

// quantile returns the q-quantile (0 < q <= 1) of the durations observed: the middle
// of the bucket holding it. 0 when nothing was observed.
func (h *histogram) quantile(q float64) time.Duration {
	var counts [histBuckets]uint64
	var total uint64
	for i := range h.n {
		counts[i] = h.n[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.999999)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			return time.Duration(lo+hi) * time.Microsecond / 2
		}
	}
	return 0
}
