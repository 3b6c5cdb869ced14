package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// metrics are one run's measurements, by metric name.
type metrics map[string]float64

// workload measures the systems once (one repetition). A workload has either run,
// which measures one system at a time, or blocks, which measures all of them on open
// connections in interleaved blocks of calls.
type workload struct {
	name   string
	run    func(ctx context.Context, s *system, env *runEnv) (metrics, error)
	blocks *blocked
}

// runEnv is what a workload needs beyond the system.
type runEnv struct {
	binDir string
	self   string // this executable, for the memory and regmem workloads' host processes
	// warmup and duration are the steady workloads' warm-up and measured durations.
	warmup, duration time.Duration
	// regmemN is the number of adapters regmem opens.
	regmemN int
}

// Sizes of the workloads. A full default run (5 repetitions, 4 systems) stays within
// about six minutes on a shared 2-core machine.
const (
	spawnTimes    = 5
	warmupCalls   = 300
	blockCount    = 16 // interleaved blocks per repetition of rtt, par32 and big
	rttBlock      = 500
	parCallers    = 32
	parBlock      = 1500
	bigBlockCount = 8
	bigTimed      = 2
	fanoutConns   = 100
	fanoutCalls   = 10
	callTimeout   = 30 * time.Second
	openTimeout   = time.Minute
	bigSmallSize  = 1 << 20
	// bigPipeSize is 3.9 MiB, which fits the 4 MiB frame of the pipe systems with the
	// envelope around it.
	bigPipeSize = 39 << 20 / 10
)

// smallParams is the ~64-byte params object of rtt, par32 and fanout.
var smallParams = typedRecord([]byte(`{"probe":"inlet","seq":42,"unit":"celsius","pad":"0123456789ab"}`))

// workloads in the order they run. rtt, par32 and big each have a block mode (the bare
// name) and a steady mode (the name with steadySuffix).
var workloads = []workload{
	{name: "spawn", run: runSpawn},
	{name: "rtt", blocks: rttBlocks},
	{name: "rtt" + steadySuffix, run: runRTTSteady},
	{name: "par32", blocks: par32Blocks},
	{name: "par32" + steadySuffix, run: runPar32Steady},
	{name: "big", blocks: bigBlocks},
	{name: "big" + steadySuffix, run: runBigSteady},
	{name: "fanout", run: runFanout},
	{name: "memory", run: runMemory},
	{name: "regmem", run: runRegmem},
	{name: "stream", run: runStream},
}

// steadySuffix marks the steady-state mode of a workload that also has a block mode.
const steadySuffix = "-steady"

// Modes of -mode.
const (
	modeBlock  = "block"
	modeSteady = "steady"
	modeBoth   = "both"
)

func workloadNames() []string {
	var n []string
	for _, w := range workloads {
		n = append(n, w.name)
	}
	return n
}

// selectWorkloads returns the workloads list names (comma-separated) under mode: a
// workload with both modes, named bare ("rtt"), stands for its block mode, its steady
// mode or both, as mode says; one named with its mode ("rtt-steady") is taken as named.
// The result is in running order.
func selectWorkloads(list, mode string) ([]string, error) {
	if mode != modeBlock && mode != modeSteady && mode != modeBoth {
		return nil, fmt.Errorf("unknown mode %q (known: %s, %s, %s)", mode, modeBlock, modeSteady, modeBoth)
	}
	named, err := pick(list, workloadNames(), "workload")
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range named {
		steady := n + steadySuffix
		if !slices.Contains(workloadNames(), steady) {
			want[n] = true
			continue
		}
		want[n] = want[n] || mode != modeSteady
		want[steady] = want[steady] || mode != modeBlock
	}
	var out []string
	for _, n := range workloadNames() {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
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
		if err != nil && verifies(s.name) {
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
			if _, err := in.Close(); err != nil && verifies(s.name) && errs[i] == nil {
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
	m := memSplit()
	return m.heap + m.stack
}

// memUse is the host memory the fanout and regmem workloads read.
type memUse struct{ heap, stack, goroutines uint64 }

// memSplit returns HeapInuse and StackInuse after two garbage collections, and the
// number of goroutines.
func memSplit() memUse {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memUse{heap: ms.HeapInuse, stack: ms.StackInuse, goroutines: uint64(runtime.NumGoroutine())}
}

// bigParams is {"s":"xxx..."} whose string has n characters.
func bigParams(n int) []byte {
	return []byte(`{"s":"` + strings.Repeat("x", n) + `"}`)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
