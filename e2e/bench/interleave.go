package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// blocked is a workload measured on one open connection per system at once, in
// blocks of calls whose system order rotates from block to block (A B C D,
// B C D A, ...), so that every system meets the same load of a shared machine. Each
// system's measurements are pooled over its blocks.
type blocked struct {
	// count is the number of blocks per repetition.
	count int
	// block makes one block of calls on in and adds to st.
	block func(ctx context.Context, s *system, in instance, st *blockState) error
	// finish turns a system's pooled measurements into metrics.
	finish func(st *blockState) metrics
}

// blockState is one system's measurements over the blocks of a repetition.
type blockState struct {
	lat   []float64                // per-call latencies in µs (rtt)
	calls int                      // calls made in timed blocks
	busy  time.Duration            // time spent in timed blocks
	bytes map[string]float64       // payload bytes moved, by metric (big)
	spent map[string]time.Duration // time spent moving them, by metric (big)
}

// runBlocked runs one repetition of a blocked workload over systems (already rotated
// for the repetition). A system whose open, warm-up or calls fail gets an error; the
// others go on.
func runBlocked(ctx context.Context, b *blocked, systems []*system) (map[string]metrics, map[string]error) {
	errs := map[string]error{}
	ins := map[string]instance{}
	states := map[string]*blockState{}
	defer func() {
		for name, in := range ins {
			if _, err := in.Close(); err != nil && verifies(name) && errs[name] == nil {
				errs[name] = fmt.Errorf("close: %w", err)
			}
		}
	}()
	var live []*system
	for _, s := range systems {
		in, err := openInstance(ctx, s)
		if err != nil {
			errs[s.name] = fmt.Errorf("open: %w", err)
			continue
		}
		ins[s.name] = in
		if err := warmUp(ctx, in); err != nil {
			errs[s.name] = fmt.Errorf("warm-up: %w", err)
			continue
		}
		states[s.name] = &blockState{bytes: map[string]float64{}, spent: map[string]time.Duration{}}
		live = append(live, s)
	}
	for i := range b.count {
		for _, s := range rotate(live, i) {
			if errs[s.name] != nil {
				continue
			}
			if err := b.block(ctx, s, ins[s.name], states[s.name]); err != nil {
				errs[s.name] = err
			}
		}
	}
	out := map[string]metrics{}
	for _, s := range live {
		if errs[s.name] == nil {
			out[s.name] = b.finish(states[s.name])
		}
	}
	return out, errs
}

func warmUp(ctx context.Context, in instance) error {
	for range warmupCalls {
		if err := call(ctx, in, smallParams); err != nil {
			return err
		}
	}
	return nil
}

// rttBlocks: one caller, rttBlock sequential calls per block, each timed.
var rttBlocks = &blocked{
	count: blockCount,
	block: func(ctx context.Context, _ *system, in instance, st *blockState) error {
		start := time.Now()
		for range rttBlock {
			t := time.Now()
			if err := call(ctx, in, smallParams); err != nil {
				return err
			}
			st.lat = append(st.lat, us(time.Since(t)))
		}
		st.busy += time.Since(start)
		st.calls += rttBlock
		return nil
	},
	finish: func(st *blockState) metrics {
		slices.Sort(st.lat)
		return metrics{
			"p50_us":      percentile(st.lat, 50),
			"p99_us":      percentile(st.lat, 99),
			"calls_per_s": float64(st.calls) / st.busy.Seconds(),
		}
	},
}

// par32Blocks: 32 concurrent callers share parBlock calls per block.
var par32Blocks = &blocked{
	count: blockCount,
	block: func(ctx context.Context, _ *system, in instance, st *blockState) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, parCallers)
		start := time.Now()
		for range parCallers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= parBlock {
					if err := call(ctx, in, smallParams); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		st.busy += time.Since(start)
		st.calls += parBlock
		close(errs)
		return <-errs
	},
	finish: func(st *blockState) metrics {
		return metrics{"calls_per_s": float64(st.calls) / st.busy.Seconds()}
	},
}

// The payloads of big, built once.
var (
	bigSmall = typedBlob(bigParams(bigSmallSize))
	bigPipe  = typedBlob(bigParams(bigPipeSize))
)

// bigSize is one of big's payloads and the metric of its MB/s.
type bigSize struct {
	key string
	p   []byte
}

// bigSizes are the payloads of big for s: 1 MiB, and 3.9 MiB for the pipe systems.
func bigSizes(s *system) []bigSize {
	sizes := []bigSize{{"mbps_1MiB", bigSmall}}
	if s.pipe {
		sizes = append(sizes, bigSize{"mbps_3.9MiB", bigPipe})
	}
	return sizes
}

// bigBlocks: per block, for a 1 MiB string and (pipe systems) a 3.9 MiB one, one
// untimed echo (the first call after the other systems' blocks pays for waking the
// processes and faulting in their buffers again) and bigTimed timed ones. MB/s counts
// the payload both ways (10^6 bytes).
var bigBlocks = &blocked{
	count: bigBlockCount,
	block: func(ctx context.Context, s *system, in instance, st *blockState) error {
		for _, sz := range bigSizes(s) {
			if err := call(ctx, in, sz.p); err != nil {
				return fmt.Errorf("%d bytes: %w", len(sz.p), err)
			}
			start := time.Now()
			for range bigTimed {
				if err := call(ctx, in, sz.p); err != nil {
					return fmt.Errorf("%d bytes: %w", len(sz.p), err)
				}
			}
			st.spent[sz.key] += time.Since(start)
			st.bytes[sz.key] += float64(2 * bigTimed * len(sz.p))
		}
		return nil
	},
	finish: func(st *blockState) metrics {
		m := metrics{}
		for k, b := range st.bytes {
			m[k] = b / st.spent[k].Seconds() / 1e6
		}
		return m
	},
}
