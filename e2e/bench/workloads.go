package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are one run's measurements, by metric name.
type metrics map[string]float64

// workload measures one system once.
type workload struct {
	name string
	run  func(ctx context.Context, s *system, env *runEnv) (metrics, error)
}

// runEnv is what a workload needs beyond the system.
type runEnv struct {
	binDir string
	self   string // this executable, for the memory workload's host process
}

// Sizes of the workloads. A full default run (5 repetitions, 4 systems) stays within
// about six minutes on a shared 2-core machine.
const (
	spawnTimes   = 5
	rttWarmup    = 300
	rttCalls     = 8000
	parCallers   = 32
	parCalls     = 24000
	bigCalls     = 12
	fanoutConns  = 100
	fanoutCalls  = 10
	callTimeout  = 30 * time.Second
	openTimeout  = time.Minute
	bigSmallSize = 1 << 20
	// bigPipeSize is 3.9 MiB, which fits the 4 MiB frame of the pipe systems with the
	// envelope around it.
	bigPipeSize = 39 << 20 / 10
)

// smallParams is the ~64-byte params object of rtt, par32 and fanout.
var smallParams = []byte(`{"probe":"inlet","seq":42,"unit":"celsius","pad":"0123456789ab"}`)

var workloads = []workload{
	{"spawn", runSpawn},
	{"rtt", runRTT},
	{"par32", runPar32},
	{"big", runBig},
	{"fanout", runFanout},
	{"memory", runMemory},
}

func workloadNames() []string {
	var n []string
	for _, w := range workloads {
		n = append(n, w.name)
	}
	return n
}

// call makes one echo call with the call timeout and checks the reply.
func call(ctx context.Context, in instance, p []byte) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	got, err := in.Call(ctx, p)
	if err != nil {
		return err
	}
	return checkEcho(got, p)
}

// openInstance opens one instance within the open timeout.
func openInstance(ctx context.Context, s *system) (instance, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	return s.open(ctx)
}

// withInstance opens an instance, warms it up with n small calls, runs f and closes it.
func withInstance(ctx context.Context, s *system, warmup int, f func(instance) (metrics, error)) (m metrics, err error) {
	in, err := openInstance(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer func() {
		if _, cerr := in.Close(); err == nil && cerr != nil && s.name == sysAdapterkit {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	for range warmup {
		if err := call(ctx, in, smallParams); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	return f(in)
}

// runSpawn launches the child, makes the first call, and stops it, spawnTimes times:
// start_ms is launch to first successful call, stop_ms the close (verified for
// adapterkit, go-plugin's Kill, the floor's close-and-wait).
func runSpawn(ctx context.Context, s *system, _ *runEnv) (metrics, error) {
	var starts, stops []float64
	verified := 0
	for range spawnTimes {
		t0 := time.Now()
		in, err := openInstance(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		if err := call(ctx, in, smallParams); err != nil {
			_, _ = in.Close()
			return nil, fmt.Errorf("first call: %w", err)
		}
		t1 := time.Now()
		ok, err := in.Close()
		t2 := time.Now()
		if err != nil && s.name == sysAdapterkit {
			return nil, fmt.Errorf("close: %w", err)
		}
		if ok {
			verified++
		}
		starts = append(starts, ms(t1.Sub(t0)))
		stops = append(stops, ms(t2.Sub(t1)))
	}
	return metrics{
		"start_ms": median(starts),
		"stop_ms":  median(stops),
		"verified": float64(verified) / spawnTimes,
	}, nil
}

// runRTT times rttCalls sequential calls of one caller.
func runRTT(ctx context.Context, s *system, _ *runEnv) (metrics, error) {
	return withInstance(ctx, s, rttWarmup, func(in instance) (metrics, error) {
		lat := make([]float64, 0, rttCalls)
		start := time.Now()
		for range rttCalls {
			t := time.Now()
			if err := call(ctx, in, smallParams); err != nil {
				return nil, err
			}
			lat = append(lat, us(time.Since(t)))
		}
		total := time.Since(start)
		slices.Sort(lat)
		return metrics{
			"p50_us":      percentile(lat, 50),
			"p99_us":      percentile(lat, 99),
			"calls_per_s": rttCalls / total.Seconds(),
		}, nil
	})
}

// runPar32 shares parCalls calls among 32 concurrent callers on one connection.
func runPar32(ctx context.Context, s *system, _ *runEnv) (metrics, error) {
	return withInstance(ctx, s, rttWarmup, func(in instance) (metrics, error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, parCallers)
		start := time.Now()
		for range parCallers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= parCalls {
					if err := call(ctx, in, smallParams); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		total := time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			return nil, err
		}
		return metrics{"calls_per_s": parCalls / total.Seconds()}, nil
	})
}

// bigParams is {"s":"xxx..."} whose string has n characters.
func bigParams(n int) []byte {
	return []byte(`{"s":"` + strings.Repeat("x", n) + `"}`)
}

// runBig echoes a 1 MiB string (and 3.9 MiB for the pipe systems) bigCalls times each;
// MB/s counts the payload both ways (10^6 bytes).
func runBig(ctx context.Context, s *system, _ *runEnv) (metrics, error) {
	sizes := []struct {
		key string
		n   int
	}{{"mbps_1MiB", bigSmallSize}}
	if s.pipe {
		sizes = append(sizes, struct {
			key string
			n   int
		}{"mbps_3.9MiB", bigPipeSize})
	}
	return withInstance(ctx, s, 10, func(in instance) (metrics, error) {
		m := metrics{}
		for _, sz := range sizes {
			p := bigParams(sz.n)
			if err := call(ctx, in, p); err != nil { // warm-up
				return nil, err
			}
			start := time.Now()
			for range bigCalls {
				if err := call(ctx, in, p); err != nil {
					return nil, err
				}
			}
			m[sz.key] = float64(2*len(p)*bigCalls) / time.Since(start).Seconds() / 1e6
		}
		return m, nil
	})
}

// runFanout opens fanoutConns instances at once, makes fanoutCalls calls on each, then
// measures the host's memory per idle open connection (heap and goroutine stacks in use
// after two collections, relative to before the opens) and closes them all.
func runFanout(ctx context.Context, s *system, _ *runEnv) (metrics, error) {
	before := hostMem()
	start := time.Now()
	ins := make([]instance, fanoutConns)
	errs := make([]error, fanoutConns)
	var wg sync.WaitGroup
	for i := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, err := openInstance(ctx, s)
			if err != nil {
				errs[i] = fmt.Errorf("open %d: %w", i, err)
				return
			}
			ins[i] = in
			for range fanoutCalls {
				if err := call(ctx, in, smallParams); err != nil {
					errs[i] = fmt.Errorf("call on %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	opened := time.Since(start)
	after := hostMem()
	closeStart := time.Now()
	for i, in := range ins {
		if in == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := in.Close(); err != nil && s.name == sysAdapterkit && errs[i] == nil {
				errs[i] = fmt.Errorf("close %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	closed := time.Since(closeStart)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return metrics{
		"open_calls_s": opened.Seconds(),
		"close_s":      closed.Seconds(),
		"total_s":      time.Since(start).Seconds(),
		"kib_per_conn": float64(int64(after)-int64(before)) / fanoutConns / 1024,
	}, nil
}

// hostMem returns the heap and stack bytes in use after two garbage collections (the
// second empties the sync.Pools the first moved to their victim caches).
func hostMem() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
