package main

import (
	"math"
	"slices"
)

// median returns the median of xs (the mean of the middle two for an even count), or
// NaN for none. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted, or NaN
// for none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// medians returns, for every metric present in any run, the median over the runs that
// have it.
func medians(runs []metrics) metrics {
	vals := map[string][]float64{}
	for _, r := range runs {
		for k, v := range r {
			vals[k] = append(vals[k], v)
		}
	}
	out := metrics{}
	for k, v := range vals {
		out[k] = median(v)
	}
	return out
}

// rotate returns xs rotated left by k, so that repetition k starts with a different
// system (A B C, B C A, C A B, ...).
func rotate[T any](xs []T, k int) []T {
	if len(xs) == 0 {
		return nil
	}
	k %= len(xs)
	return append(slices.Clone(xs[k:]), xs[:k]...)
}
