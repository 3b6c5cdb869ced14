package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The steady-state workloads (rtt-steady, par32-steady, big-steady) measure what a host
// streaming work sees: per repetition, one system at a time (the order rotating with
// the repetitions, as spawn's), a fresh connection is opened, called back to back for
// the warm-up duration (discarded), then for the measured duration, and closed. The
// block workloads instead alternate short blocks of calls among open connections.

// maxSamples caps the latency samples kept per measurement (8 MiB of float64): beyond
// it, reservoir sampling keeps a uniform sample of all the calls.
const maxSamples = 1 << 20

// sampler keeps up to max latency samples, uniformly chosen among all those added.
type sampler struct {
	max  int
	seen int
	xs   []float64
	rng  *rand.Rand
}

func newSampler(max int) *sampler {
	return &sampler{max: max, rng: rand.New(rand.NewPCG(1, 2))}
}

// add records x: kept while fewer than max are held, else it replaces a held sample
// with probability max/seen (Algorithm R).
func (s *sampler) add(x float64) {
	s.seen++
	if len(s.xs) < s.max {
		s.xs = append(s.xs, x)
		return
	}
	if j := s.rng.IntN(s.seen); j < s.max {
		s.xs[j] = x
	}
}

// steadyLoop calls fn back to back while less than d has passed since it started, by
// now's clock, adding each call's latency in µs to lat (if not nil). It returns the
// calls made and the time they took: the last call may end after d.
func steadyLoop(now func() time.Time, d time.Duration, fn func() error, lat *sampler) (int, time.Duration, error) {
	start := now()
	t := start
	calls := 0
	for t.Sub(start) < d {
		if err := fn(); err != nil {
			return calls, t.Sub(start), err
		}
		end := now()
		if lat != nil {
			lat.add(us(end.Sub(t)))
		}
		calls++
		t = end
	}
	return calls, t.Sub(start), nil
}

// steadyResult is one steady measurement: calls made, wall time and latency samples.
type steadyResult struct {
	calls   int
	elapsed time.Duration
	lat     []float64
}

// steadyCallers runs callers concurrent steadyLoops of fn for d on a shared start and
// pools them: calls are summed, elapsed is the wall time until the last one ended, and
// the latency samples are merged (each caller keeps up to maxSamples/callers).
func steadyCallers(now func() time.Time, callers int, d time.Duration, fn func() error) (steadyResult, error) {
	if callers == 1 {
		lat := newSampler(maxSamples)
		n, el, err := steadyLoop(now, d, fn, lat)
		return steadyResult{calls: n, elapsed: el, lat: lat.xs}, err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		res   steadyResult
		first error
	)
	start := now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := newSampler(maxSamples / callers)
			n, _, err := steadyLoop(now, d, fn, lat)
			mu.Lock()
			defer mu.Unlock()
			res.calls += n
			res.lat = append(res.lat, lat.xs...)
			if err != nil && first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	res.elapsed = now().Sub(start)
	return res, first
}

// steadyRun opens a connection to s, runs measure on it once for the warm-up (its
// result discarded) and once for the measured duration, and closes it.
func steadyRun(ctx context.Context, s *system, env *runEnv, measure func(d time.Duration, in instance) (metrics, error)) (m metrics, err error) {
	in, err := openInstance(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer func() {
		if _, cerr := in.Close(); cerr != nil && verifies(s.name) && err == nil {
			m, err = nil, fmt.Errorf("close: %w", cerr)
		}
	}()
	if _, err := measure(env.warmup, in); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	return measure(env.duration, in)
}

// latencyMetrics adds p50_us, p99_us and calls_per_s of r to m.
func latencyMetrics(m metrics, r steadyResult) metrics {
	slices.Sort(r.lat)
	m["p50_us"] = percentile(r.lat, 50)
	m["p99_us"] = percentile(r.lat, 99)
	m["calls_per_s"] = float64(r.calls) / r.elapsed.Seconds()
	return m
}

// runRTTSteady: one caller, back to back, each call timed.
func runRTTSteady(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	return steadyRun(ctx, s, env, func(d time.Duration, in instance) (metrics, error) {
		r, err := steadyCallers(time.Now, 1, d, func() error { return call(ctx, in, smallParams) })
		if err != nil {
			return nil, err
		}
		return latencyMetrics(metrics{}, r), nil
	})
}

// runPar32Steady: parCallers callers, each back to back, each call timed.
func runPar32Steady(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	return steadyRun(ctx, s, env, func(d time.Duration, in instance) (metrics, error) {
		r, err := steadyCallers(time.Now, parCallers, d, func() error { return call(ctx, in, smallParams) })
		if err != nil {
			return nil, err
		}
		return latencyMetrics(metrics{}, r), nil
	})
}

// runBigSteady: one caller echoing the 1 MiB string back to back for the duration,
// then (pipe systems) the 3.9 MiB one for as long. MB/s counts the payload both ways.
// Where /proc tells, it also reports the child's minor page faults per call: a child
// whose collector hands the large buffers' memory back to the kernel between calls
// faults it in again on the next one, and runs of the same build differ by how often
// that happens.
func runBigSteady(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	return steadyRun(ctx, s, env, func(d time.Duration, in instance) (metrics, error) {
		m := metrics{}
		for _, sz := range bigSizes(s) {
			f0, faultsOK := minorFaults(in.Pid())
			n, el, err := steadyLoop(time.Now, d, func() error { return call(ctx, in, sz.p) }, nil)
			if err != nil {
				return nil, fmt.Errorf("%d bytes: %w", len(sz.p), err)
			}
			m[sz.key] = float64(2*n*len(sz.p)) / el.Seconds() / 1e6
			if f1, ok := minorFaults(in.Pid()); ok && faultsOK && n > 0 {
				m[faultsKey(sz.key)] = float64(f1-f0) / float64(n)
			}
		}
		return m, nil
	})
}

// faultsKey names the page-fault metric of the big metric key (mbps_SIZE -> faults_SIZE).
func faultsKey(key string) string { return "faults_" + strings.TrimPrefix(key, "mbps_") }

// minorFaults returns the minor page faults process pid has taken so far (field 10 of
// /proc/PID/stat), and false where that cannot be read.
func minorFaults(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from
	// after its closing one, where field 3 (the state) starts.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	const minflt = 10 - 3 // field 10, counted from field 3
	if len(f) <= minflt {
		return 0, false
	}
	n, err := strconv.ParseUint(f[minflt], 10, 64)
	return n, err == nil
}
