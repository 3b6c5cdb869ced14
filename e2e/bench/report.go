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
	"spawn":        {"start_ms", "stop_ms", "verified"},
	"rtt":          {"p50_us", "p99_us", "calls_per_s"},
	"rtt-steady":   {"p50_us", "p99_us", "calls_per_s"},
	"par32":        {"calls_per_s"},
	"par32-steady": {"calls_per_s", "p50_us", "p99_us"},
	"big":          {"mbps_1MiB", "mbps_3.9MiB"},
	"big-steady":   {"mbps_1MiB", "mbps_3.9MiB", "faults_1MiB", "faults_3.9MiB"},
	"fanout":       {"total_s", "open_calls_s", "close_s", "kib_per_conn"},
	"memory":       {"host_peak_mib", "adapter_peak_mib"},
	"stream":       {"mbps_upload", "mbps_download", "mbps_echo_1MiB", "upload_per_echo", "download_per_echo"},
	"regmem":       {"kib_per_adapter", "heap_kib_per_adapter", "stack_kib_per_adapter", "goroutines_per_adapter", "open_s", "close_s"},
}

// result is the outcome of one (system, workload) pair over all repetitions.
type result struct {
	Run      int       `json:"run"`
	System   string    `json:"system"`
	Workload string    `json:"workload"`
	Reps     int       `json:"reps"`
	Median   metrics   `json:"median"`
	Runs     []metrics `json:"runs"`
	Errors   []string  `json:"errors,omitempty"`
}

// results holds every result by workload, then system.
type results struct {
	run       int // 1-based number of the run, of -runs
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
		r = &result{Run: rs.run, System: system, Workload: workload}
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
	writeTargets(w, rs.verdicts())
	if withJSON {
		fmt.Fprintln(w)
		return rs.writeJSON(w)
	}
	return nil
}
