package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
)

const topHelp = `
Shows the daemon's adapters in a table refreshed every --interval (default 1s), like
'docker stats': state, pid, CPU use (percent of one core over the last interval, and
seconds in all), memory and peak memory of the whole process tree (where the platform
can say; "-" otherwise), calls (in all and per second), errors, calls in flight and
the worst method's p99 latency, and the upgrades: how many new versions took over,
how many old ones still finish calls ("draining"), and whether the last new version
was refused ('adapterctl status' says why). --once prints one table and exits (rates, which need
two samples, show "-"); an interrupt (Ctrl-C) ends the display with exit status 0.
With --json each refresh is one JSON array of rows on a line.
`

// topRow is one adapter's line of top.
type topRow struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	State       string   `json:"state"`
	PID         int      `json:"pid,omitempty"`
	CPUPercent  *float64 `json:"cpu_percent,omitempty"`
	CPUSeconds  *float64 `json:"cpu_seconds,omitempty"`
	MemoryBytes *int64   `json:"memory_bytes,omitempty"`
	MemoryPeak  *int64   `json:"memory_peak_bytes,omitempty"`
	Calls       uint64   `json:"calls"`
	CallsPerSec *float64 `json:"calls_per_second,omitempty"`
	Errors      uint64   `json:"errors"`
	InFlight    int64    `json:"in_flight"`
	WorstP99MS  float64  `json:"worst_p99_ms"`
	Restarts    int      `json:"restarts"`
	Upgrades    int      `json:"upgrades"`
	// Starts and FailedStarts count the processes started and the starts that failed;
	// Abandoned the in-flight slots held by calls whose callers gave up.
	Starts       uint64 `json:"starts"`
	FailedStarts uint64 `json:"failed_starts"`
	Abandoned    int    `json:"abandoned"`
	// Draining counts the old versions still finishing calls after an upgrade.
	Draining      int    `json:"draining"`
	UpgradeError  string `json:"upgrade_error,omitempty"`
	path          string
	sampledAtNano int64
}

func runTop(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	var once bool
	var interval time.Duration
	register := func(f *flags) {
		f.BoolVar(&once, "once", false, "print one table and exit")
		f.DurationVar(&interval, "interval", time.Second, "time between refreshes")
	}
	if done, status := clientCommand(e, "top", &o, register, args); done {
		return status
	}
	if interval <= 0 {
		return fail(e, "top", false, usagef("--interval must be positive, not %v", interval), nil)
	}
	prev := map[string]topRow{}
	for {
		var r *controlplane.StatusResult
		err := withDaemon(ctx, &o, requestWait, func(ctx context.Context, c *controlplane.Client) (err error) {
			r, err = c.Status(ctx)
			return err
		})
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return ExitOK
			}
			return fail(e, "top", o.json, err, nil)
		}
		rows := topRows(r, prev, time.Now())
		if o.json {
			err = printTopJSON(e.stdout, rows)
		} else {
			if !once {
				fmt.Fprint(rawWriter(e.stdout), "\x1b[H\x1b[2J") // home and clear, as top does
			}
			err = printTop(e.stdout, r, rows)
		}
		if err != nil || once {
			return finish(e, "top", err)
		}
		for _, row := range rows {
			prev[row.path] = row
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ExitOK
		case <-t.C:
		}
	}
}

// topRows makes the rows of a status, with rates against the previous rows.
func topRows(r *controlplane.StatusResult, prev map[string]topRow, now time.Time) []topRow {
	rows := make([]topRow, 0, len(r.Adapters))
	for _, a := range r.Adapters {
		row := topRow{Name: a.Name, Version: a.Version, Upgrades: a.Upgrades, Draining: len(a.Draining), UpgradeError: a.UpgradeError, State: a.State, PID: a.PID, CPUSeconds: a.CPUSeconds, MemoryBytes: a.MemoryBytes,
			MemoryPeak: a.MemoryPeakBytes, Restarts: a.Restarts, Starts: a.Starts, FailedStarts: a.FailedStarts, Abandoned: a.Abandoned,
			path: a.Path, sampledAtNano: now.UnixNano()}
		for _, m := range a.Methods {
			row.Calls += m.Calls
			row.InFlight += m.InFlight
			row.WorstP99MS = max(row.WorstP99MS, m.P99MS)
			for _, n := range m.Errors {
				row.Errors += n
			}
		}
		if p, ok := prev[a.Path]; ok {
			secs := float64(row.sampledAtNano-p.sampledAtNano) / 1e9
			if secs > 0 {
				rate := float64(row.Calls-min(row.Calls, p.Calls)) / secs
				row.CallsPerSec = &rate
				if row.CPUSeconds != nil && p.CPUSeconds != nil && p.PID == row.PID {
					pct := max(0, *row.CPUSeconds-*p.CPUSeconds) / secs * 100
					row.CPUPercent = &pct
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func printTopJSON(w io.Writer, rows []topRow) error {
	return json.NewEncoder(w).Encode(rows)
}

func printTop(w io.Writer, r *controlplane.StatusResult, rows []topRow) error {
	ew := &errWriter{w: w}
	ew.printf("adapterctl top: daemon pid %d, %s open, %d calls in flight, health %s\n",
		r.PID, count(len(rows), "adapter", "adapters"), r.InFlight, r.Health)
	if ew.err != nil {
		return ew.err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tVERSION\tSTATE\tPID\tCPU %%\tCPU\tMEMORY\tPEAK\tCALLS\tCALLS/S\tERRORS\tIN FLIGHT\tWORST P99\tRESTARTS\tUPGRADES\tSTARTS\tABANDONED\n")
	for _, row := range rows {
		upgrades := fmt.Sprint(row.Upgrades)
		if row.Draining > 0 {
			upgrades += fmt.Sprintf(" (%d draining)", row.Draining)
		}
		if row.UpgradeError != "" {
			upgrades += " (last refused)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%d\n", row.Name, orNone(row.Version), row.State, pidText(row.PID),
			fixed(row.CPUPercent, 1, "%"), fixed(row.CPUSeconds, 2, "s"), bytesText(row.MemoryBytes), bytesText(row.MemoryPeak),
			row.Calls, fixed(row.CallsPerSec, 1, ""), row.Errors, row.InFlight, msText(row.WorstP99MS), row.Restarts, upgrades,
			startsText(row.Starts, row.FailedStarts), row.Abandoned)
	}
	return tw.Flush()
}

// printFigures prints the per-adapter figures of a status: resource use, last exit,
// per-method calls and the stderr tail.
func printFigures(w io.Writer, adapters []controlplane.AdapterStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\n  NAME\tMEMORY\tPEAK\tCPU\tVIOLATIONS\tLAST EXIT\n")
	for _, a := range adapters {
		exit := "-"
		if x := a.LastExit; x != nil {
			exit = strings.TrimSpace(x.Time.Format(time.RFC3339) + " " + x.Status)
			if x.Cause != "" {
				exit += " (" + x.Cause + ")"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\n", a.Name, bytesText(a.MemoryBytes), bytesText(a.MemoryPeakBytes),
			fixed(a.CPUSeconds, 2, "s"), a.Violations, exit)
	}
	fmt.Fprintf(tw, "\n  NAME\tMETHOD\tCALLS\tERRORS\tUNCERTAIN\tIN FLIGHT\tP50\tP99\n")
	for _, a := range adapters {
		for _, m := range a.Methods {
			errs := "-"
			if len(m.Errors) > 0 {
				var parts []string
				for _, c := range slices.Sorted(maps.Keys(m.Errors)) {
					parts = append(parts, fmt.Sprintf("%s=%d", c, m.Errors[c]))
				}
				errs = strings.Join(parts, ",")
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\n", a.Name, m.Method, m.Calls, errs, m.Uncertain, m.InFlight,
				msText(m.P50MS), msText(m.P99MS))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew := &errWriter{w: w}
	for _, a := range adapters {
		if len(a.LogTail) == 0 {
			continue
		}
		ew.printf("\n  stderr of %s (last %s):\n", a.Name, count(len(a.LogTail), "line", "lines"))
		for _, l := range a.LogTail {
			ew.printf("    %s\n", l)
		}
	}
	return ew.err
}

// startsText is the processes started, with the starts that failed when any did.
func startsText(starts, failed uint64) string {
	if failed == 0 {
		return fmt.Sprint(starts)
	}
	return fmt.Sprintf("%d (%d failed)", starts, failed)
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return fmt.Sprint(pid)
}

func fixed(v *float64, prec int, unit string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f%s", prec, *v, unit)
}

func msText(ms float64) string {
	if ms == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", ms)
}

// bytesText is a byte count in binary units, "-" when unknown.
func bytesText(v *int64) string {
	if v == nil {
		return "-"
	}
	n := float64(*v)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if n < 1024 || u == "GiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", *v)
			}
			return fmt.Sprintf("%.1f %s", n, u)
		}
		n /= 1024
	}
	return ""
}
