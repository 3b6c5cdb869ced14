package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// fakeResults returns results with the given medians: vals[workload][system][metric].
func fakeResults(run int, vals map[string]map[string]metrics) *results {
	rs := &results{run: run, by: map[string]map[string]*result{}}
	for wl, bySys := range vals {
		rs.workloads = append(rs.workloads, wl)
		for sys, m := range bySys {
			r := rs.get(wl, sys)
			r.Runs = []metrics{m}
			r.Median = medians(r.Runs)
		}
	}
	return rs
}

// find returns the verdict of the target labelled label in mode, if evaluated.
func find(vs []verdict, label, mode string) (verdict, bool) {
	for _, v := range vs {
		if v.t.label == label && v.mode == mode {
			return v, true
		}
	}
	return verdict{}, false
}

func TestVerdicts(t *testing.T) {
	rs := fakeResults(1, map[string]map[string]metrics{
		"rtt": {
			sysAdapterkit: {"p50_us": 60}, sysNetRPC: {"p50_us": 200},
			sysFloor: {"p50_us": 59}, sysPingpong: {"p50_us": 40}, sysGRPC: {"p50_us": 240},
		},
		"rtt-steady": {sysAdapterkit: {"p50_us": 80}, sysNetRPC: {"p50_us": 100}, sysGRPC: {"p50_us": 160}},
		"par32":      {sysAdapterkit: {"calls_per_s": 150}, sysNetRPC: {"calls_per_s": 100}},
		"regmem":     {sysAdapterkit: {"kib_per_adapter": 48}},
		"spawn":      {sysAdapterkit: {"start_ms": 2}, sysNetRPC: {"start_ms": 4}, sysGRPC: {"start_ms": 5}},
	})
	vs := rs.verdicts()
	tests := []struct {
		label, mode string
		value       float64
		met         bool
	}{
		{"rtt p50 vs go-plugin net/rpc", modeBlock, 0.3, true},
		{"rtt p50 vs go-plugin net/rpc", modeSteady, 0.8, false},
		{"rtt p50 vs go-plugin gRPC", modeBlock, 0.25, false}, // reported: never met
		{"rtt p50 vs go-plugin gRPC", modeSteady, 0.5, false},
		{"rtt p50 vs floor", modeBlock, 60.0 / 59, false},
		{"rtt p50 vs pingpong", modeBlock, 1.5, true},
		{"stretch: rtt p50 vs pingpong", modeBlock, 1.5, true},
		{"par32 calls/s vs go-plugin net/rpc", modeBlock, 1.5, true},
		{"host KiB per open adapter (registry)", "-", 48, true},
		{"spawn start vs go-plugin net/rpc", "-", 0.5, false},
		{"spawn start vs go-plugin gRPC", "-", 0.4, false}, // reported: never met
	}
	for _, tt := range tests {
		v, ok := find(vs, tt.label, tt.mode)
		if !ok {
			t.Errorf("%s (%s) not evaluated", tt.label, tt.mode)
			continue
		}
		if math.Abs(v.value-tt.value) > 1e-9 || v.met != tt.met {
			t.Errorf("%s (%s) = %v met %v, want %v met %v", tt.label, tt.mode, v.value, v.met, tt.value, tt.met)
		}
	}
	for _, absent := range []struct{ label, mode string }{
		{"rtt p50 vs floor", modeSteady},     // the floor did not run in steady mode
		{"raw: rtt p50 vs floor", modeBlock}, // the raw path did not run
		{"big 1 MiB MB/s vs go-plugin net/rpc", modeBlock},
		{"par32 calls/s vs go-plugin gRPC", modeBlock}, // gRPC did not run par32
		{"verified stop vs go-plugin net/rpc Kill", "-"},
	} {
		if _, ok := find(vs, absent.label, absent.mode); ok {
			t.Errorf("%s (%s) evaluated without its measurements", absent.label, absent.mode)
		}
	}
	var buf bytes.Buffer
	writeTargets(&buf, vs)
	for _, want := range []string{
		"rtt p50 vs go-plugin net/rpc steady 0.80x <= 0.40x MISSED",
		"rtt p50 vs go-plugin net/rpc block 0.30x <= 0.40x met",
		"(registry) - 48.00 <= 48.00 met",
		"gRPC - 0.40x - reported",
		"rtt p50 vs go-plugin gRPC steady 0.50x - reported",
	} {
		if !strings.Contains(squeeze(buf.String()), want) {
			t.Errorf("targets table lacks %q:\n%s", want, buf.String())
		}
	}
}

// squeeze collapses each line's runs of blanks into one space, so that tests read
// tabwriter's tables without depending on column widths.
func squeeze(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestRequired(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 4, 6: 5, 10: 8} {
		if got := required(n); got != want {
			t.Errorf("required(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestSummary: over five runs, a goal met in four holds, one met in three does not,
// and a target measured in some runs only shows "-" for the others.
func TestSummary(t *testing.T) {
	p50 := []float64{30, 35, 80, 30, 30} // vs net/rpc 100: met in 4 of 5 (<= 0.4)
	par := []float64{150, 100, 100, 150, 150}
	var runs [][]verdict
	for i := range 5 {
		vals := map[string]map[string]metrics{
			"rtt":   {sysAdapterkit: {"p50_us": p50[i]}, sysNetRPC: {"p50_us": 100}},
			"par32": {sysAdapterkit: {"calls_per_s": par[i]}, sysNetRPC: {"calls_per_s": 100}},
		}
		if i == 0 {
			vals["regmem"] = map[string]metrics{sysAdapterkit: {"kib_per_adapter": 40}}
		}
		runs = append(runs, fakeResults(i+1, vals).verdicts())
	}
	rows := summarize(runs)
	byLabel := map[string]*summaryRow{}
	for _, r := range rows {
		byLabel[r.v.t.label] = r
	}
	if r := byLabel["rtt p50 vs go-plugin net/rpc"]; r == nil || r.met != 4 {
		t.Errorf("rtt row: %+v, want met 4", r)
	}
	if r := byLabel["par32 calls/s vs go-plugin net/rpc"]; r == nil || r.met != 3 {
		t.Errorf("par32 row: %+v, want met 3", r)
	}
	var buf bytes.Buffer
	writeSummary(&buf, runs)
	out := buf.String()
	for _, want := range []string{
		"summary over 5 runs (a goal holds when met in at least 4)",
		"block <= 0.40x 0.30 0.35 0.80 0.30 0.30 4/5 holds",
		"block >= 1.50x 1.50 1.00 1.00 1.50 1.50 3/5 DOES NOT HOLD",
		"(registry) - <= 48.00 40.00 - - - - 1/5 DOES NOT HOLD",
	} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
