package main

import (
	"bytes"
	"context"
	"debug/elf"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
)

// callerParams are the par32 callers' params, each with its typed value.
var callerParams [][]byte

func TestMain(m *testing.M) {
	if os.Getenv("BENCH_TEST_SILENT_HOST") != "" {
		return // run as a host process that reports nothing (TestRegmem)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

func TestMedianPercentile(t *testing.T) {
	tests := []struct {
		xs       []float64
		median   float64
		p50, p99 float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 2, 4},
		{[]float64{5, 1, 4, 2, 3}, 3, 3, 5},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.xs)
		if got := median(in); got != tt.median {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.median)
		}
		if !slices.Equal(in, tt.xs) {
			t.Errorf("median modified its input: %v", in)
		}
		s := slices.Sorted(slices.Values(tt.xs))
		if got := percentile(s, 50); got != tt.p50 {
			t.Errorf("p50(%v) = %v, want %v", tt.xs, got, tt.p50)
		}
		if got := percentile(s, 99); got != tt.p99 {
			t.Errorf("p99(%v) = %v, want %v", tt.xs, got, tt.p99)
		}
	}
	if !math.IsNaN(median(nil)) || !math.IsNaN(percentile(nil, 50)) {
		t.Error("median and percentile of nothing must be NaN")
	}
	m := medians([]metrics{{"a": 1, "b": 10}, {"a": 3}, {"a": 2, "b": 20}})
	if m["a"] != 2 || m["b"] != 15 {
		t.Errorf("medians = %v, want a=2 b=15", m)
	}
}

func TestRotate(t *testing.T) {
	xs := []string{"A", "B", "C"}
	want := [][]string{{"A", "B", "C"}, {"B", "C", "A"}, {"C", "A", "B"}, {"A", "B", "C"}}
	for k, w := range want {
		if got := rotate(xs, k); !slices.Equal(got, w) {
			t.Errorf("rotate(%v, %d) = %v, want %v", xs, k, got, w)
		}
	}
	if !slices.Equal(xs, []string{"A", "B", "C"}) {
		t.Errorf("rotate modified its input: %v", xs)
	}
}

func TestPick(t *testing.T) {
	got, err := pick(" rtt,spawn,rtt ,", workloadNames(), "workload")
	if err != nil || !slices.Equal(got, []string{"rtt", "spawn"}) {
		t.Errorf("pick = %v, %v; want [rtt spawn]", got, err)
	}
	if _, err := pick("rtt,nope", workloadNames(), "workload"); err == nil {
		t.Error("an unknown workload was accepted")
	}
	if _, err := pick(",", allSystems, "system"); err == nil {
		t.Error("an empty list was accepted")
	}
}

func TestVmHWM(t *testing.T) {
	kib, err := vmHWM("self")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if kib <= 0 {
		t.Errorf("VmHWM of self = %d KiB", kib)
	}
}

// TestSystemsEcho builds the child programs and checks every system's echo with the
// workloads' payloads, sequential and concurrent, then its close (verified for
// adapterkit).
func TestSystemsEcho(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts processes")
	}
	dir := builtDir(t)
	ctx := context.Background()
	if callerParams == nil {
		for i := range parCallers {
			p := []byte(`{"probe":"caller","seq":` + strconv.Itoa(i) + `,"unit":"","pad":""}`)
			typedPayloads[&p[0]] = echoapi.Record{Probe: "caller", Seq: int64(i)}
			callerParams = append(callerParams, p)
		}
	}
	for _, name := range allSystems {
		t.Run(name, func(t *testing.T) {
			s, err := newSystem(name, dir)
			if err != nil {
				t.Fatal(err)
			}
			in, err := openInstance(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if name == sysPingpong {
				checkPingpong(t, in)
				return
			}
			payloads := [][]byte{smallParams, bigSmall}
			if s.pipe {
				payloads = append(payloads, bigPipe)
			}
			for _, p := range payloads {
				if err := call(ctx, in, p); err != nil {
					t.Errorf("echo of %d bytes: %v", len(p), err)
				}
			}
			// Each caller's own params, so that crossed replies would show.
			callConcurrently(ctx, t, in, callerParams[:parCallers], 20)
			if _, err := vmHWM(strconv.Itoa(in.Pid())); err != nil {
				t.Errorf("child memory: %v", err)
			}
			verified, err := in.Close()
			if verifies(name) && (!verified || err != nil) {
				t.Errorf("adapterkit close: verified %v, %v", verified, err)
			}
			if !verifies(name) && verified {
				t.Errorf("%s claims a verified close", name)
			}
		})
	}
}

func TestCheckEcho(t *testing.T) {
	if err := checkEcho([]byte(`{"a":1}`), []byte(`{"a":1}`)); err != nil {
		t.Error(err)
	}
	if err := checkEcho([]byte(`{"a":2}`), []byte(`{"a":1}`)); err == nil {
		t.Error("a different reply passed")
	}
}

func TestReport(t *testing.T) {
	rs := &results{systems: []string{sysAdapterkit, sysFloor}, workloads: []string{"rtt"}, by: map[string]map[string]*result{}}
	for s, v := range map[string]float64{sysAdapterkit: 10, sysFloor: 20} {
		r := rs.get("rtt", s)
		r.Runs = []metrics{{"p50_us": v, "p99_us": 2 * v, "calls_per_s": 1000}}
		r.Reps = 1
		r.Median = medians(r.Runs)
	}
	var buf bytes.Buffer
	if err := rs.writeReport(&buf, "header", true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"header", "p50_us", "rtt p50 vs floor", "0.50x", "met", `"system":"adapterkit"`} {
		if !bytes.Contains([]byte(out), []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains([]byte(out), []byte("net/rpc")) {
		t.Errorf("report evaluates a target whose system did not run:\n%s", out)
	}
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// builtDir builds the child programs once for all the tests that need them, into a
// directory removed when the tests end (see TestMain).
func builtDir(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "adapterkit-bench-test-")
		if buildErr == nil {
			buildErr = build(buildDir, false)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// checkPingpong checks that the pingpong child bounces exactly the small params,
// sequentially and from several callers at once, refuses params of another length,
// and exits when its stdin is closed.
func checkPingpong(t *testing.T, in instance) {
	ctx := context.Background()
	other := bytes.Repeat([]byte{'z'}, pingpongSize)
	params := make([][]byte, 8)
	for i := range params {
		params[i] = smallParams
		if i%2 == 1 {
			params[i] = other
		}
	}
	callConcurrently(ctx, t, in, params, 50)
	if _, err := in.Call(ctx, smallParams[:pingpongSize-1]); err == nil {
		t.Error("pingpong accepted 63 bytes")
	}
	if verified, err := in.Close(); verified || err != nil {
		t.Errorf("pingpong close: verified %v, %v", verified, err)
	}
}

// TestRegmem runs the regmem workload's host process (the bench binary, built here)
// over a few adapters: every adapter is opened, called and closed verified, and no
// child process is left (the host checks and fails otherwise).
func TestRegmem(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts processes")
	}
	dir := builtDir(t)
	self := filepath.Join(t.TempDir(), "bench")
	if _, err := goOutput("", nil, "build", "-o", self, "."); err != nil {
		t.Fatal(err)
	}
	env := &runEnv{binDir: dir, self: self, regmemN: 12}
	m, err := runRegmem(context.Background(), &system{name: sysAdapterkit}, env)
	if err != nil {
		t.Fatal(err)
	}
	if kib := m["kib_per_adapter"]; !(kib > 0 && kib < 10<<10) {
		t.Errorf("kib_per_adapter = %v, want a positive count below 10 MiB", kib)
	}
	if sum := m["heap_kib_per_adapter"] + m["stack_kib_per_adapter"]; math.Abs(sum-m["kib_per_adapter"]) > 1e-6 {
		t.Errorf("heap %v + stack %v KiB per adapter != %v", m["heap_kib_per_adapter"], m["stack_kib_per_adapter"], m["kib_per_adapter"])
	}
	if _, ok := m["goroutines_per_adapter"]; !ok {
		t.Error("no goroutines_per_adapter")
	}
	if m["open_s"] <= 0 || m["close_s"] <= 0 {
		t.Errorf("open_s %v, close_s %v: want positive times", m["open_s"], m["close_s"])
	}
	// The test binary, told by its environment to exit at once: a host that prints
	// nothing and succeeds, which the workload must not take for a measurement.
	env.self = os.Args[0]
	t.Setenv("BENCH_TEST_SILENT_HOST", "1")
	if _, err := runRegmem(context.Background(), &system{name: sysAdapterkit}, env); err == nil {
		t.Error("regmem accepted a host process that reported nothing")
	}
}

// callConcurrently calls in from one goroutine per element of params, each n times with
// its params, and reports every failed call.
func callConcurrently(ctx context.Context, t *testing.T, in instance, params [][]byte, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(params))
	for _, p := range params {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := call(ctx, in, p); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Built with the go command's defaults, the SDK's echo adapter is statically linked
// (no program interpreter): the SDK links neither net nor cgo, so -cgo default changes
// only how go-plugin's children are linked.
func TestEchoAdapterStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF programs only")
	}
	if testing.Short() {
		t.Skip("builds the child programs")
	}
	f, err := elf.Open(filepath.Join(builtDir(t), binEcho))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the echo adapter is dynamically linked")
		}
	}
}

func TestCgoFlag(t *testing.T) {
	err := run([]string{"-cgo", "on", "-workloads", "rtt", "-systems", sysFloor})
	if err == nil || !strings.Contains(err.Error(), "-cgo must be") {
		t.Fatalf("-cgo on: %v", err)
	}
}
