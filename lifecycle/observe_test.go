//go:build linux

package lifecycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// lockedBuffer is safe for a writer and a reader at once.
type lockedBuffer = testkit.Buffer

func openObserve(t *testing.T, cfg lifecycle.Config) *lifecycle.Adapter {
	t.Helper()
	cfg.Path = self(t)
	cfg.Env = append(env("observe"), cfg.Env...)
	a, err := lifecycle.Open(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// Two adapters logging at once: every record lands under its adapter's name with its
// pid; JSON records keep their level and fields, plain lines come at the chosen level.
func TestStderrAttributedTwoAdapters(t *testing.T) {
	var out lockedBuffer
	host := hclog.New(&hclog.LoggerOptions{Name: "host", Output: &out, Level: hclog.Trace, JSONFormat: true})
	names := []string{"alpha", "beta"}
	adapters := make([]*lifecycle.Adapter, len(names))
	for i, n := range names {
		adapters[i] = openObserve(t, lifecycle.Config{Name: n, StderrLogger: host, StderrLevel: hclog.Info,
			Env: []string{"ADAPTERKIT_LOG_LEVEL=trace"}})
	}
	const calls = 25
	var wg sync.WaitGroup
	for i, a := range adapters {
		wg.Go(func() {
			for range calls {
				p := fmt.Sprintf(`{"level":"warn","msg":"reading","probe":"probe-%s","plain":"plain from %s\n"}`, names[i], names[i])
				if _, err := a.Call(ctxT(t), "test.obs.log", json.RawMessage(p)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	pids := map[string]float64{}
	for i, a := range adapters {
		pids["host."+names[i]] = float64(a.Pid())
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	count := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON record: %q", l)
		}
		mod, _ := m["@module"].(string)
		pid, ok := pids[mod]
		if !ok {
			continue // the host's other records
		}
		name := strings.TrimPrefix(mod, "host.")
		if m["pid"] != pid {
			t.Errorf("record of %s has pid %v, want %v", mod, m["pid"], pid)
		}
		switch m["@message"] {
		case "reading":
			if m["@level"] != "warn" || m["probe"] != "probe-"+name || m["n"] != float64(7) || m["module"] != "lifecycle.test" {
				t.Errorf("JSON record of %s: %v", name, m)
			}
			count[name+" json"]++
		case "plain from " + name:
			if m["@level"] != "info" {
				t.Errorf("plain line of %s at %v, want info", name, m["@level"])
			}
			count[name+" plain"]++
		default:
			t.Errorf("unexpected record under %s: %v", mod, m)
		}
	}
	for _, n := range names {
		if count[n+" json"] != calls || count[n+" plain"] != calls {
			t.Errorf("%s: %d JSON records and %d plain lines, want %d each", n, count[n+" json"], count[n+" plain"], calls)
		}
	}
}

// An adapter's panic reaches the host's log as one record, real process and pipe in
// between: the panic's line its message, the runtime's stack (goroutines, frames) the
// field "stack" with its newlines, escaped once in JSON.
func TestStderrPanicOneRecord(t *testing.T) {
	var out lockedBuffer
	host := hclog.New(&hclog.LoggerOptions{Name: "host", Output: &out, Level: hclog.Trace, JSONFormat: true})
	a := openObserve(t, lifecycle.Config{Name: "alpha", StderrLogger: host, StderrLevel: hclog.Error})
	pid := float64(a.Pid())
	_, err := a.Call(ctxT(t), "test.obs.panic", json.RawMessage(`{"value":"boom\nsecond line"}`))
	if err == nil {
		t.Fatal("the call of a crashing adapter succeeded")
	}
	_ = a.Close() // the adapter has crashed: Close reports how
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON record: %q", l)
		}
		if m["@module"] == "host.alpha" && m["pid"] == pid {
			recs = append(recs, m)
		}
	}
	if len(recs) != 1 {
		t.Fatalf("%d records of the adapter, want 1:\n%s", len(recs), out.String())
	}
	stack, _ := recs[0]["stack"].(string)
	if recs[0]["@message"] != "panic: boom" || recs[0]["@level"] != "error" ||
		!strings.HasPrefix(stack, "\tsecond line\n") || !strings.Contains(stack, "\ngoroutine ") ||
		!strings.Contains(stack, "observe_modes_test.go:") || strings.Contains(out.String(), `\\x0a`) {
		t.Errorf("panic record: %v", recs[0])
	}
}

// floodSeconds is the flood test's duration: $ADAPTERKIT_FLOOD_SECONDS (10 to
// measure), else 2.
func floodSeconds(t *testing.T) float64 {
	if s := os.Getenv("ADAPTERKIT_FLOOD_SECONDS"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			t.Fatalf("ADAPTERKIT_FLOOD_SECONDS=%q", s)
		}
		return f
	}
	return 2
}

// An adapter writing stderr as fast as it can, into a host logger whose output never
// moves (the worst case for memory) or one that formats every record and discards it
// (the worst case for the host's CPU): its writes never wait on the host's logger (the
// pipe is drained), the host's memory stays bounded, and another adapter's calls go
// on. The figures are logged.
func TestStderrFlood(t *testing.T) {
	t.Run("blocked logger", func(t *testing.T) { testFlood(t, true) })
	t.Run("discarding logger", func(t *testing.T) { testFlood(t, false) })
}

func testFlood(t *testing.T, blocked bool) {
	secs := floodSeconds(t)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	if !blocked {
		unblock()
	}
	stuck := writerFunc(func(p []byte) (int, error) { <-release; return len(p), nil })
	host := hclog.New(&hclog.LoggerOptions{Output: stuck, Level: hclog.Trace})
	flooder := openObserve(t, lifecycle.Config{Name: "flooder", StderrLogger: host, LogTail: 20})
	quiet := openObserve(t, lifecycle.Config{Name: "quiet", StderrLogger: host})
	ctx := ctxT(t)

	latency := func(d time.Duration) (p50, max time.Duration, n int) {
		var ds []time.Duration
		for end := time.Now().Add(d); time.Now().Before(end); {
			s := time.Now()
			if _, err := quiet.Call(ctx, "test.obs.ok", json.RawMessage(`{"pad":"x"}`)); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, time.Since(s))
		}
		sortDurations(ds)
		return ds[len(ds)/2], ds[len(ds)-1], len(ds)
	}
	idleCPU, idleWall := hostCPU(t), time.Now()
	idle50, idleMax, idleN := latency(time.Second)
	idleShare := float64(hostCPU(t)-idleCPU) / float64(time.Since(idleWall)) * 100

	var before runtimeMem
	before.read()
	cpu0, wall0 := hostCPU(t), time.Now()
	if _, err := flooder.Call(ctx, "test.obs.flood", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, int(secs*1000)))); err != nil {
		t.Fatal(err)
	}
	peak := before
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				var m runtimeMem
				m.read()
				peak.max(m)
			}
		}
	}()
	flood50, floodMax, floodN := latency(time.Duration(secs * float64(time.Second) * 0.8))
	fctx, cancel := context.WithTimeout(ctx, time.Duration(secs*float64(time.Second))+30*time.Second)
	defer cancel()
	raw, err := flooder.Call(fctx, "test.obs.flooded", nil)
	hostShare := float64(hostCPU(t)-cpu0) / float64(time.Since(wall0)) * 100
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("the flood did not end: its writes were blocked: %v", err)
	}
	var res [2]int64
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	st := flooder.Stats()
	growth := int64(peak.heap) - int64(before.heap)
	t.Logf("flood %.0f s: adapter wrote %.1f MiB (%.1f MiB/s), longest write %v; %d lines dropped; host heap growth %.1f MiB (peak in use %.1f MiB)",
		secs, float64(res[0])/(1<<20), float64(res[0])/(1<<20)/secs, time.Duration(res[1]), st.DroppedLogLines,
		float64(growth)/(1<<20), float64(peak.heap)/(1<<20))
	t.Logf("host process CPU: %.0f%% of one core during the flood, %.0f%% before it (the test's calls to the other adapter included)", hostShare, idleShare)
	t.Logf("other adapter's calls: idle p50 %v max %v (%d calls in 1 s); during the flood p50 %v max %v (%d calls in %.1f s)",
		idle50, idleMax, idleN, flood50, floodMax, floodN, secs*0.8)
	if res[0] < 1<<20 {
		t.Errorf("the flooder wrote only %d bytes", res[0])
	}
	if blocked && st.DroppedLogLines == 0 {
		t.Errorf("nothing was dropped although the host's logger never moved")
	}
	// The queue is 1 MiB, a line at most 64 KiB: anything near 32 MiB is a leak.
	if growth > 32<<20 {
		t.Errorf("host heap grew by %d bytes during the flood", growth)
	}
	if len(st.LogTail) != 20 || !strings.HasPrefix(st.LogTail[19], "flood flood") {
		t.Errorf("log tail: %d lines, last %q", len(st.LogTail), st.LogTail[len(st.LogTail)-1])
	}
	unblock()
}

// hostCPU is the CPU time this process (the host) has used.
func hostCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runtimeMem is the host's heap in use.
type runtimeMem struct{ heap uint64 }

func (m *runtimeMem) read() {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	m.heap = ms.HeapInuse
}

func (m *runtimeMem) max(o runtimeMem) { m.heap = max(m.heap, o.heap) }

func sortDurations(ds []time.Duration) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The figures count exactly a known mix of successes, every error code the adapter
// returns, cancels, deadlines and a refused method; the Observer sees the same.
func TestCallFiguresExact(t *testing.T) {
	var mu sync.Mutex
	ends := map[string]int{}
	starts := 0
	var procStarts, procExits int
	obs := &lifecycle.Observer{
		CallStart: func(lifecycle.CallStartInfo) { mu.Lock(); starts++; mu.Unlock() },
		CallEnd: func(e lifecycle.CallEndInfo) {
			mu.Lock()
			defer mu.Unlock()
			ends[e.Method+" "+string(e.Code)+" "+strconv.FormatBool(e.Uncertain)]++
		},
		ProcessStart: func(lifecycle.ProcessInfo) { mu.Lock(); procStarts++; mu.Unlock() },
		ProcessExit:  func(lifecycle.ExitInfo) { mu.Lock(); procExits++; mu.Unlock() },
	}
	a := openObserve(t, lifecycle.Config{Name: "counted", Observer: obs})
	ctx := ctxT(t)
	var wantOut, wantIn uint64
	const oks = 7
	for i := range oks {
		p := json.RawMessage(fmt.Sprintf(`{"pad":"%s"}`, strings.Repeat("p", i)))
		res, err := a.Call(ctx, "test.obs.ok", p)
		if err != nil {
			t.Fatal(err)
		}
		wantOut += uint64(len(p))
		wantIn += uint64(len(res))
	}
	codes := map[wire.Code]int{}
	for i, c := range proto.Codes {
		for range i%3 + 1 {
			p := json.RawMessage(`{"code":"` + string(c) + `"}`)
			if _, err := a.Call(ctx, "test.obs.fail", p); runtime.CodeOf(err) != c {
				t.Fatalf("fail %s: %v", c, err)
			}
			codes[c]++
			wantOut += uint64(len(p))
		}
	}
	const cancels, deadlines = 3, 2
	for range cancels {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := a.Call(cctx, "test.obs.hang", nil); runtime.CodeOf(err) != wire.CodeAborted || !runtime.IsUncertain(err) {
			t.Fatalf("cancel: %v", err)
		}
	}
	for range deadlines {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		if _, err := a.Call(dctx, "test.obs.hang", nil); runtime.CodeOf(err) != wire.CodeDeadline || !runtime.IsUncertain(err) {
			t.Fatalf("deadline: %v", err)
		}
		cancel()
	}
	if _, err := a.Call(ctx, "test.obs.nosuch", nil); !errors.Is(err, runtime.ErrUnknownMethod) {
		t.Fatalf("unknown method: %v", err)
	}
	st := a.Stats()
	byMethod := map[string]lifecycle.MethodStats{}
	for _, m := range st.Methods {
		byMethod[m.Method] = m
	}
	if len(byMethod) != 4 {
		t.Fatalf("methods: %+v", st.Methods)
	}
	if m := byMethod["test.obs.ok"]; m.Calls != oks || len(m.Errors) != 0 || m.Uncertain != 0 || m.BytesIn != wantIn || m.P50 <= 0 || m.P99 < m.P50 {
		t.Errorf("ok: %+v (want %d calls, %d bytes in)", m, oks, wantIn)
	}
	fail := byMethod["test.obs.fail"]
	for c, n := range codes {
		if fail.Errors[c] != uint64(n) {
			t.Errorf("fail: %d %s errors, want %d", fail.Errors[c], c, n)
		}
	}
	if fail.Uncertain != 0 || fail.BytesOut+byMethod["test.obs.ok"].BytesOut != wantOut {
		t.Errorf("fail: %+v; bytes out want %d in all", fail, wantOut)
	}
	hang := byMethod["test.obs.hang"]
	if hang.Calls != cancels+deadlines || hang.Errors[wire.CodeAborted] != cancels || hang.Errors[wire.CodeDeadline] != deadlines || hang.Uncertain != cancels+deadlines {
		t.Errorf("hang: %+v", hang)
	}
	if m := byMethod["test.obs.nosuch"]; m.Calls != 1 || m.Errors[wire.CodeUnavailable] != 1 || m.Uncertain != 0 {
		t.Errorf("unknown method: %+v", m)
	}
	if st.InFlight != 0 || st.Pid != a.Pid() {
		t.Errorf("stats: in flight %d, pid %d (want %d)", st.InFlight, st.Pid, a.Pid())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	st = a.Stats()
	if st.LastExit == nil || !st.LastExit.HostClosed || st.Pid != 0 {
		t.Errorf("after close: pid %d, last exit %+v", st.Pid, st.LastExit)
	}
	mu.Lock()
	defer mu.Unlock()
	total := oks + sum(codes) + cancels + deadlines + 1
	if starts != total || ends["test.obs.ok  false"] != oks || ends["test.obs.hang aborted true"] != cancels ||
		ends["test.obs.hang deadline true"] != deadlines || ends["test.obs.fail busy false"] != codes[wire.CodeBusy] ||
		ends["test.obs.nosuch unavailable false"] != 1 || procStarts != 1 || procExits != 1 {
		t.Errorf("observer: %d starts (want %d), ends %v, process starts %d exits %d", starts, total, ends, procStarts, procExits)
	}
}

func sum(m map[wire.Code]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// An adapter that allocates 64 MiB shows it in its tree's memory figures, and CPU
// time it burns in its CPU figure: with a memory cgroup (a limit makes one, v2 or v1)
// and without (the sum over the tree's processes).
func TestUsagePlausible(t *testing.T) {
	for _, c := range []struct {
		name string
		res  platform.Resources
	}{{"memory cgroup", platform.Resources{MemoryBytes: 1 << 30}}, {"process sum", platform.Resources{}}} {
		t.Run(c.name, func(t *testing.T) {
			a := openObserve(t, lifecycle.Config{Name: "alloc", Resources: c.res})
			if c.res.MemoryBytes > 0 && a.LimitErr() != nil {
				t.Skipf("no memory cgroup on this machine: %v", a.LimitErr())
			}
			before := a.Stats().Usage
			if !before.HasMemory || !before.HasCPU {
				t.Skipf("the platform reports no usage here: %+v", before)
			}
			ctx := ctxT(t)
			if _, err := a.Call(ctx, "test.obs.alloc", json.RawMessage(`{"mib":64}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Call(ctx, "test.obs.spin", json.RawMessage(`{"ms":300}`)); err != nil {
				t.Fatal(err)
			}
			u := a.Stats().Usage
			t.Logf("before: %+v; after 64 MiB and 300 ms of spinning: memory %.1f MiB, peak %.1f MiB, CPU %v",
				before, float64(u.MemoryBytes)/(1<<20), float64(u.MemoryPeakBytes)/(1<<20), u.CPU)
			if u.MemoryBytes < 64<<20 || u.MemoryBytes > 512<<20 {
				t.Errorf("memory %d bytes: not plausible for 64 MiB allocated", u.MemoryBytes)
			}
			if !u.HasPeak || u.MemoryPeakBytes < u.MemoryBytes || u.MemoryPeakBytes > 1<<30 {
				t.Errorf("peak %d bytes (has %v), current %d", u.MemoryPeakBytes, u.HasPeak, u.MemoryBytes)
			}
			// Wall time of a spin on a shared machine is not CPU time: ask for some.
			if u.CPU <= before.CPU || u.CPU < 20*time.Millisecond || u.CPU > time.Hour {
				t.Errorf("CPU %v (before %v): not plausible after spinning 300 ms", u.CPU, before.CPU)
			}
		})
	}
}

// A supervised adapter that exits and is restarted: its figures go on across the
// restart, the exit is recorded, the observer hears of both starts and the restart,
// and the restarted process's records carry the restart count.
func TestSupervisedFiguresAcrossRestart(t *testing.T) {
	var out lockedBuffer
	host := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Trace, JSONFormat: true})
	var mu sync.Mutex
	var starts []lifecycle.ProcessInfo
	var restarts []lifecycle.RestartInfo
	var exits []lifecycle.ExitInfo
	obs := &lifecycle.Observer{
		ProcessStart: func(p lifecycle.ProcessInfo) { mu.Lock(); starts = append(starts, p); mu.Unlock() },
		Restart:      func(r lifecycle.RestartInfo) { mu.Lock(); restarts = append(restarts, r); mu.Unlock() },
		ProcessExit:  func(e lifecycle.ExitInfo) { mu.Lock(); exits = append(exits, e); mu.Unlock() },
	}
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("observe"), Name: "phoenix",
		StderrLogger: host, StderrLevel: hclog.Info, Observer: obs, LogTail: 5},
		lifecycle.RestartPolicy{MaxRestarts: 1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := ctxT(t)
	if _, err := s.Call(ctx, "test.obs.exit", nil); !runtime.IsUncertain(err) {
		t.Fatalf("exit call: %v", err)
	}
	// The call waits out the restart.
	if _, err := s.Call(ctx, "test.obs.log", json.RawMessage(`{"plain":"back\n"}`)); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Restarts != 1 || st.LastExit == nil || st.LastExit.Status != "exit status 3" || st.LastExit.Cause == nil || st.LastExit.HostClosed {
		t.Errorf("stats after the restart: restarts %d, last exit %+v", st.Restarts, st.LastExit)
	}
	byMethod := map[string]lifecycle.MethodStats{}
	for _, m := range st.Methods {
		byMethod[m.Method] = m
	}
	if m := byMethod["test.obs.exit"]; m.Calls != 1 || m.Errors[wire.CodeClosed] != 1 || m.Uncertain != 1 {
		t.Errorf("exit figures: %+v", m)
	}
	if m := byMethod["test.obs.log"]; m.Calls != 1 || len(m.Errors) != 0 {
		t.Errorf("log figures: %+v", m)
	}
	pid := st.Pid
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(starts) != 2 || starts[0].Restarts != 0 || starts[1].Restarts != 1 || len(restarts) != 1 || restarts[0].Attempt != 1 ||
		restarts[0].Err != nil || len(exits) != 2 || exits[0].HostClosed || !exits[1].HostClosed {
		t.Errorf("observer: starts %+v, restarts %+v, exits %+v", starts, restarts, exits)
	}
	mu.Unlock()
	var sawExit, sawBack bool
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["@module"] != "phoenix" {
			continue
		}
		switch m["@message"] {
		case "exiting with status 3":
			sawExit = m["restart"] == nil
		case "back":
			sawBack = m["restart"] == float64(1) && m["pid"] == float64(pid)
		}
	}
	if !sawExit || !sawBack {
		t.Errorf("records before and after the restart (restart field only after): %v %v\n%s", sawExit, sawBack, out.String())
	}
}

// A tree the kernel stops at its memory limit is counted and reported to the observer.
func TestLimitHitObserved(t *testing.T) {
	hits := make(chan lifecycle.LimitInfo, 1)
	obs := &lifecycle.Observer{LimitHit: func(l lifecycle.LimitInfo) { hits <- l }}
	a := openObserve(t, lifecycle.Config{Name: "hog", Observer: obs, Resources: platform.Resources{MemoryBytes: 48 << 20}})
	if err := a.LimitErr(); err != nil {
		t.Skipf("no memory limit on this machine: %v", err)
	}
	if _, err := a.Call(ctxT(t), "test.obs.alloc", json.RawMessage(`{"mib":256}`)); err == nil {
		t.Fatal("256 MiB allocated under a 48 MiB limit")
	}
	select {
	case <-a.Done():
	case <-ctxT(t).Done():
		t.Fatal("the adapter did not end")
	}
	select {
	case l := <-hits:
		if !errors.Is(l.Err, platform.ErrMemoryLimit) || l.Adapter != "hog" {
			t.Errorf("limit hit: %+v", l)
		}
	default:
		t.Fatal("the observer was not told of the limit hit")
	}
	if st := a.Stats(); st.LimitHits != 1 || st.LastExit == nil || st.Pid != 0 {
		t.Errorf("stats: %+v", st)
	}
}
