package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
)

// metricOrder lists each workload's metrics in table order, with their units.
var metricOrder = map[string][]string{
	"spawn":  {"start_ms", "stop_ms", "verified"},
	"rtt":    {"p50_us", "p99_us", "calls_per_s"},
	"par32":  {"calls_per_s"},
	"big":    {"mbps_1MiB", "mbps_3.9MiB"},
	"fanout": {"total_s", "open_calls_s", "close_s", "kib_per_conn"},
	"memory": {"host_peak_mib", "adapter_peak_mib"},
}

// result is the outcome of one (system, workload) pair over all repetitions.
type result struct {
	System   string    `json:"system"`
	Workload string    `json:"workload"`
	Reps     int       `json:"reps"`
	Median   metrics   `json:"median"`
	Runs     []metrics `json:"runs"`
	Errors   []string  `json:"errors,omitempty"`
}

// results holds every result by workload, then system.
type results struct {
	systems   []string
	workloads []string
	by        map[string]map[string]*result
}

func (rs *results) get(workload, system string) *result {
	if rs.by[workload] == nil {
		rs.by[workload] = map[string]*result{}
	}
	r := rs.by[workload][system]
	if r == nil {
		r = &result{System: system, Workload: workload}
		rs.by[workload][system] = r
	}
	return r
}

// record adds one repetition's outcome for (workload, system) and reports whether it
// failed, printing the failure.
func (rs *results) record(workload string, rep int, system string, m metrics, err error) bool {
	r := rs.get(workload, system)
	r.Reps++
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		fmt.Fprintf(os.Stderr, "%-7s rep %d %-16s FAILED: %v\n", workload, rep+1, system, err)
		return true
	}
	r.Runs = append(r.Runs, m)
	return false
}

// value returns the median of metric for (workload, system), or NaN.
func (rs *results) value(workload, system, metric string) float64 {
	r := rs.by[workload][system]
	if r == nil {
		return math.NaN()
	}
	v, ok := r.Median[metric]
	if !ok {
		return math.NaN()
	}
	return v
}

// machine describes where the bench ran.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel += " " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (%s), %s, %s/%s, kernel %s",
		runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel)
}

// writeTable writes the medians: one row per (workload, metric), one column per system.
func (rs *results) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\tmetric\t")
	for _, s := range rs.systems {
		fmt.Fprintf(tw, "%s\t", s)
	}
	fmt.Fprintln(tw)
	for _, wl := range rs.workloads {
		for _, m := range metricOrder[wl] {
			fmt.Fprintf(tw, "%s\t%s\t", wl, m)
			for _, s := range rs.systems {
				fmt.Fprintf(tw, "%s\t", format(rs.value(wl, s, m)))
			}
			fmt.Fprintln(tw)
		}
	}
	_ = tw.Flush()
}

func format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// target is one of the goals: adapterkit's value of a metric divided by
// another system's (or the absolute value when other is ""), compared with goal.
type target struct {
	sys              string // the system measured; "" for adapterkit (typed)
	workload, metric string
	other            string // "" for an absolute goal
	otherMetric      string // the other system's metric, when it differs
	atMost           bool   // the ratio must be <= goal, else >= goal
	goal             float64
	label            string
}

var targets = []target{
	{"", "rtt", "p50_us", sysFloor, "", true, 1.10, "rtt p50 vs floor"},
	{sysRaw, "rtt", "p50_us", sysFloor, "", true, 1.05, "raw: rtt p50 vs floor"},
	{"", "rtt", "p50_us", sysNetRPC, "", true, 0.85, "rtt p50 vs go-plugin net/rpc"},
	{"", "par32", "calls_per_s", sysNetRPC, "", false, 1.5, "par32 calls/s vs go-plugin net/rpc"},
	{"", "big", "mbps_1MiB", sysNetRPC, "", false, 1.0, "big 1 MiB MB/s vs go-plugin net/rpc"},
	{"", "spawn", "start_ms", sysNetRPC, "", true, 0.5, "spawn start vs go-plugin net/rpc"},
	{"", "spawn", "start_ms", sysGRPC, "", true, 0.5, "spawn start vs go-plugin gRPC"},
	{"", "spawn", "stop_ms", sysNetRPC, "", true, 1.0, "verified stop vs go-plugin net/rpc Kill"},
	{"", "spawn", "stop_ms", sysGRPC, "", true, 1.0, "verified stop vs go-plugin gRPC Kill"},
	{"", "memory", "adapter_peak_mib", sysNetRPC, "", true, 0.5, "adapter peak RSS vs go-plugin net/rpc plugin"},
	{"", "memory", "adapter_peak_mib", sysGRPC, "", true, 0.5, "adapter peak RSS vs go-plugin gRPC plugin"},
	{"", "fanout", "kib_per_conn", "", "", true, 64, "host KiB per idle open connection"},
	{"", "rtt", "p50_us", sysRaw, "", true, 0, "typed/raw rtt p50"},
	{"", "par32", "calls_per_s", sysRaw, "", false, 0, "typed/raw par32 calls/s"},
	{"", "big", "mbps_1MiB", sysRaw, "", false, 0, "typed/raw big 1 MiB MB/s"},
	{"", "big", "mbps_3.9MiB", sysRaw, "", false, 0, "typed/raw big 3.9 MiB MB/s"},
	{sysRaw, "rtt", "p50_us", sysNetRPC, "", true, 0.85, "raw: rtt p50 vs go-plugin net/rpc"},
	{sysRaw, "par32", "calls_per_s", sysNetRPC, "", false, 1.5, "raw: par32 calls/s vs go-plugin net/rpc"},
	{sysRaw, "big", "mbps_1MiB", sysNetRPC, "", false, 1.0, "raw: big 1 MiB MB/s vs go-plugin net/rpc"},
}

// writeTargets writes each goal whose systems ran, with adapterkit's ratio.
func (rs *results) writeTargets(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tvalue\tgoal\tresult")
	for _, t := range targets {
		sys := t.sys
		if sys == "" {
			sys = sysAdapterkit
		}
		v := rs.value(t.workload, sys, t.metric)
		if t.other != "" {
			v /= rs.value(t.workload, t.other, t.metric)
		}
		if math.IsNaN(v) {
			continue
		}
		op, met := ">=", v >= t.goal
		if t.atMost {
			op, met = "<=", v <= t.goal
		}
		verdict := "met"
		if !met {
			verdict = "MISSED"
		}
		if t.goal == 0 { // reported, no goal
			fmt.Fprintf(tw, "%s\t%.2fx\t-\treported\n", t.label, v)
			continue
		}
		unit := "x"
		if t.other == "" {
			unit = ""
		}
		fmt.Fprintf(tw, "%s\t%.2f%s\t%s %.2f%s\t%s\n", t.label, v, unit, op, t.goal, unit, verdict)
	}
	_ = tw.Flush()
}

// writeJSON writes one JSON line per (system, workload).
func (rs *results) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, wl := range rs.workloads {
		for _, s := range rs.systems {
			if r := rs.by[wl][s]; r != nil {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeReport writes the header, the table, the targets and, if withJSON, the JSON lines.
func (rs *results) writeReport(w io.Writer, header string, withJSON bool) error {
	fmt.Fprintln(w, header)
	fmt.Fprintln(w)
	rs.writeTable(w)
	fmt.Fprintln(w)
	rs.writeTargets(w)
	if withJSON {
		fmt.Fprintln(w)
		return rs.writeJSON(w)
	}
	return nil
}
