package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// target is one of the performance goals: a system's value of a metric divided by
// another system's in the same run (or the value itself when other is ""), compared
// with goal.
type target struct {
	sys              string // the system measured; "" for adapterkit (the typed path)
	workload, metric string
	other            string  // "" for an absolute goal
	atMost           bool    // the ratio must be <= goal, else >= goal
	goal             float64 // 0: reported beside the goals, not a goal
	label            string
	// modes marks a goal of a workload with both modes: it is evaluated on the block
	// workload and on its steady one.
	modes bool
}

// targets: the typed path first, each followed by the same goal for the raw path, then
// what must not regress; go-plugin gRPC (the mode most go-plugin users run) is quoted
// beside every goal against go-plugin net/rpc, reported and not a goal.
var targets = []target{
	{"", "rtt", "p50_us", sysNetRPC, true, 0.4, "rtt p50 vs go-plugin net/rpc", true},
	{"", "rtt", "p50_us", sysGRPC, true, 0, "rtt p50 vs go-plugin gRPC", true},
	{sysRaw, "rtt", "p50_us", sysNetRPC, true, 0.75, "raw: rtt p50 vs go-plugin net/rpc", true},
	{"", "rtt", "p50_us", sysFloor, true, 1.0, "rtt p50 vs floor", true},
	{sysRaw, "rtt", "p50_us", sysFloor, true, 1.0, "raw: rtt p50 vs floor", true},
	{"", "par32", "calls_per_s", sysNetRPC, false, 1.5, "par32 calls/s vs go-plugin net/rpc", true},
	{"", "par32", "calls_per_s", sysGRPC, false, 0, "par32 calls/s vs go-plugin gRPC", true},
	{sysRaw, "par32", "calls_per_s", sysNetRPC, false, 1.5, "raw: par32 calls/s vs go-plugin net/rpc", true},
	{"", "big", "mbps_1MiB", sysNetRPC, false, 1.2, "big 1 MiB MB/s vs go-plugin net/rpc", true},
	{"", "big", "mbps_1MiB", sysGRPC, false, 0, "big 1 MiB MB/s vs go-plugin gRPC", true},
	{sysRaw, "big", "mbps_1MiB", sysNetRPC, false, 1.2, "raw: big 1 MiB MB/s vs go-plugin net/rpc", true},
	{"", "big", "mbps_3.9MiB", sysRaw, false, 0.9, "typed/raw big 3.9 MiB MB/s", true},
	{"", "rtt", "p50_us", sysPingpong, true, 2.0, "rtt p50 vs pingpong", true},
	{"", "rtt", "p50_us", sysPingpong, true, 1.5, "stretch: rtt p50 vs pingpong", true},
	{sysRaw, "rtt", "p50_us", sysPingpong, true, 0, "raw: rtt p50 vs pingpong", true},
	{"", "regmem", "kib_per_adapter", "", true, 48, "host KiB per open adapter (registry)", false},
	{sysSandbox, "regmem", "kib_per_adapter", "", true, 0, "sandboxed: host KiB per open adapter", false},
	{"", "spawn", "start_ms", sysNetRPC, true, 0.35, "spawn start vs go-plugin net/rpc", false},
	{"", "spawn", "start_ms", sysGRPC, true, 0, "spawn start vs go-plugin gRPC", false},
	{"", "spawn", "stop_ms", sysNetRPC, true, 0.6, "verified stop vs go-plugin net/rpc Kill", false},
	{"", "spawn", "stop_ms", sysGRPC, true, 0, "verified stop vs go-plugin gRPC Kill", false},
	{"", "memory", "adapter_peak_mib", sysNetRPC, true, 0.5, "adapter peak RSS vs go-plugin net/rpc plugin", false},
	{"", "memory", "adapter_peak_mib", sysGRPC, true, 0, "adapter peak RSS vs go-plugin gRPC plugin", false},
	// A bare connection (lifecycle.Open, the raw system); the typed system opens a
	// registry per connection, whose cost per adapter regmem measures.
	{sysRaw, "fanout", "kib_per_conn", "", true, 64, "raw: host KiB per idle open connection", false},
	{"", "fanout", "kib_per_conn", "", true, 0, "typed: host KiB per idle open connection (a registry each)", false},
	{"", "rtt", "p50_us", sysRaw, true, 0, "typed/raw rtt p50", true},
	{"", "par32", "calls_per_s", sysRaw, false, 0, "typed/raw par32 calls/s", true},
	{"", "big", "mbps_1MiB", sysRaw, false, 0, "typed/raw big 1 MiB MB/s", true},
}

// verdict is a target evaluated on one run.
type verdict struct {
	t     target
	mode  string // modeBlock or modeSteady for a target with modes, else "-"
	value float64
	met   bool
}

// key identifies the verdict's target across runs.
func (v verdict) key() string { return v.t.label + "\x00" + v.mode }

// goalText is the goal as the tables print it ("<= 0.75x", ">= 1.50x", "<= 48.00", "-").
func (t target) goalText() string {
	if t.goal == 0 {
		return "-"
	}
	op := ">="
	if t.atMost {
		op = "<="
	}
	return fmt.Sprintf("%s %.2f%s", op, t.goal, t.unit())
}

func (t target) unit() string {
	if t.other == "" {
		return ""
	}
	return "x"
}

// verdicts evaluates every target whose systems and workloads ran.
func (rs *results) verdicts() []verdict {
	var out []verdict
	for _, t := range targets {
		type variant struct{ workload, mode string }
		vs := []variant{{t.workload, "-"}}
		if t.modes {
			vs = []variant{{t.workload, modeBlock}, {t.workload + steadySuffix, modeSteady}}
		}
		for _, m := range vs {
			if v, ok := rs.evaluate(t, m.workload); ok {
				out = append(out, verdict{t: t, mode: m.mode, value: v, met: t.holds(v)})
			}
		}
	}
	return out
}

// evaluate returns the target's value on workload, and false if it was not measured.
func (rs *results) evaluate(t target, workload string) (float64, bool) {
	sys := t.sys
	if sys == "" {
		sys = sysAdapterkit
	}
	v := rs.value(workload, sys, t.metric)
	if t.other != "" {
		v /= rs.value(workload, t.other, t.metric)
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// holds reports whether v meets the goal (always false for a reported row).
func (t target) holds(v float64) bool {
	switch {
	case t.goal == 0:
		return false
	case t.atMost:
		return v <= t.goal
	}
	return v >= t.goal
}

// writeTargets writes one run's verdicts.
func writeTargets(w io.Writer, vs []verdict) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmode\tvalue\tgoal\tresult")
	for _, v := range vs {
		result := "met"
		switch {
		case v.t.goal == 0:
			result = "reported"
		case !v.met:
			result = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f%s\t%s\t%s\n", v.t.label, v.mode, v.value, v.t.unit(), v.t.goalText(), result)
	}
	_ = tw.Flush()
}

// required is how many of n runs must meet a goal: four in five, rounded up.
func required(n int) int { return (4*n + 4) / 5 }

// summaryRow is one target over all runs.
type summaryRow struct {
	v      verdict   // the first run's verdict, for the label, mode and goal
	values []float64 // by run; NaN where not measured
	met    int
}

// summarize pools the verdicts of each run (runs[i] is run i+1's) by target, in the
// order targets first appear.
func summarize(runs [][]verdict) []*summaryRow {
	var rows []*summaryRow
	byKey := map[string]*summaryRow{}
	for i, vs := range runs {
		for _, v := range vs {
			r := byKey[v.key()]
			if r == nil {
				r = &summaryRow{v: v, values: make([]float64, len(runs))}
				for j := range r.values {
					r.values[j] = math.NaN()
				}
				byKey[v.key()] = r
				rows = append(rows, r)
			}
			r.values[i] = v.value
			if v.met {
				r.met++
			}
		}
	}
	return rows
}

// writeSummary writes, per target, every run's value and how many runs met it; a goal
// holds when at least required(len(runs)) runs met it.
func writeSummary(w io.Writer, runs [][]verdict) {
	need := required(len(runs))
	fmt.Fprintf(w, "summary over %d runs (a goal holds when met in at least %d):\n\n", len(runs), need)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmode\tgoal\tvalues by run\tmet\tresult")
	for _, r := range summarize(runs) {
		vals := make([]string, len(r.values))
		for i, x := range r.values {
			vals[i] = "-"
			if !math.IsNaN(x) {
				vals[i] = fmt.Sprintf("%.2f", x)
			}
		}
		met, result := fmt.Sprintf("%d/%d", r.met, len(runs)), "holds"
		switch {
		case r.v.t.goal == 0:
			met, result = "-", "reported"
		case r.met < need:
			result = "DOES NOT HOLD"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.v.t.label, r.v.mode, r.v.t.goalText(), strings.Join(vals, " "), met, result)
	}
	_ = tw.Flush()
}
