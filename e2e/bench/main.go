// Command bench compares adapterkit with hashicorp/go-plugin v1.8.0 (over net/rpc and
// over gRPC, its defaults), with a floor (the same length-prefixed JSON over a child's
// stdin and stdout written the plainest way: encoding/json, one reader goroutine, a map
// of pending ids) and with pingpong (64 raw bytes bounced over the same pipes, no
// framing, no JSON: the physical limit), on the same workloads:
//
//   - spawn: launch to first successful call, and close (adapterkit: process tree
//     verified gone; go-plugin: its Kill; floor: close stdin and wait);
//   - rtt: one caller, 64-byte params: p50/p99 in µs and calls/s;
//   - par32: 32 concurrent callers on one connection: calls/s;
//   - big: echo of a 1 MiB string (and 3.9 MiB for the pipe systems): MB/s, counting
//     the payload both ways;
//   - rtt-steady, par32-steady, big-steady: the same calls back to back for a fixed
//     duration (-duration) after a warm-up (-warmup), one system at a time;
//   - fanout: 100 connections opened at once, 10 calls each: total time and the host's
//     memory per idle open connection (heap and stacks in use after GC, processes
//     excluded);
//   - memory: peak RSS (VmHWM) of a host process and of the one adapter it drives
//     through the same calls;
//   - regmem: host memory per adapter opened through a registry.Registry (-regmem-n
//     adapters, 8 at a time, each called once through its typed client, then idle), in
//     a fresh host process;
//   - stream: a 256 MiB upload (registry.Upload) and download (registry.Download)
//     through examples/blobs, checked by CRC-32C, MB/s one way, beside the typed 1 MiB
//     echo made in the same run, and their ratio to it.
//
// pingpong takes part in rtt and rtt-steady only, regmem only adapterkit (and
// adapterkit-sandbox when named), stream only adapterkit. -mode block|steady|both says which modes of rtt,
// par32 and big run (rtt, par32 and big name the block mode in the table).
//
// Systems are interleaved. spawn, fanout, memory, regmem and the steady workloads run
// one system at a time, in an order that rotates with every repetition (A B C D,
// B C D A, ...). rtt, par32 and big open one connection per system and alternate blocks
// of calls among them, again in rotating order, so that every system meets the same
// load of a shared machine. The table shows the medians over the repetitions. -runs N
// repeats the whole measurement N times, each with its table and targets, then prints
// per target how many runs met it (a goal holds when at least four in five did).
//
// The child programs are built first into a temporary directory: examples/echo of the
// root module (also linked as adapters/echo_v1.0.0 for the registry), examples/blobs,
// cmd/gpecho
// (go-plugin), cmd/floorecho (floor) and cmd/pingpong of this module.
//
// Run it from e2e/bench (it locates the modules with the go command):
//
//	go run . [-reps 5] [-runs 1] [-mode both] [-duration 1s] [-warmup 500ms] [-regmem-n 300]
//	         [-workloads spawn,rtt,...] [-systems adapterkit,floor,...] [-json] [-out FILE] [-cpuprofile FILE]
//
// The tables and the targets go to standard output, progress to standard error; -json
// adds one JSON line per (run, system, workload), -out writes the same report to FILE
// as well.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	reps := fs.Int("reps", 5, "repetitions of every (system, workload) per run")
	runs := fs.Int("runs", 1, "whole measurements made one after the other, each with its own table and targets, then a summary")
	wlFlag := fs.String("workloads", strings.Join(baseWorkloads(), ","), "workloads to run, comma-separated ("+strings.Join(workloadNames(), ", ")+")")
	mode := fs.String("mode", modeBoth, "modes of rtt, par32 and big: block, steady or both")
	duration := fs.Duration("duration", time.Second, "steady mode: measured time per system and repetition")
	warmup := fs.Duration("warmup", 500*time.Millisecond, "steady mode: warm-up before the measured time")
	regmemN := fs.Int("regmem-n", 300, "regmem: adapters opened")
	sysFlag := fs.String("systems", strings.Join(allSystems, ","), "systems to compare, comma-separated (also: "+sysSandbox+", Linux)")
	withJSON := fs.Bool("json", false, "also print one JSON line per (system, workload)")
	out := fs.String("out", "", "also write the report (with the JSON lines) to this file")
	binDir := fs.String("bin", "", "directory of already built child programs (default: build them)")
	cgo := fs.String("cgo", cgoDefault, "how the child programs are built: "+cgoDefault+" (the go command's defaults, as a plain go build makes them) or "+cgoOff+" (CGO_ENABLED=0: all statically linked)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of this host process to this file")
	memhost := fs.String("memhost", "", "internal: run as the memory workload's host process for this system")
	regmemhost := fs.String("regmemhost", "", "internal: run as the regmem workload's host process for this system")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *memhost != "" {
		return memHost(*memhost, *binDir)
	}
	if *regmemhost != "" {
		return regmemHost(*regmemhost, *binDir, *regmemN)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case *reps < 1:
		return fmt.Errorf("-reps must be at least 1")
	case *runs < 1:
		return fmt.Errorf("-runs must be at least 1")
	case *duration <= 0 || *warmup < 0:
		return fmt.Errorf("-duration must be positive and -warmup not negative")
	case *regmemN < 1:
		return fmt.Errorf("-regmem-n must be at least 1")
	case *cgo != cgoDefault && *cgo != cgoOff:
		return fmt.Errorf("-cgo must be %s or %s", cgoDefault, cgoOff)
	}
	sysNames, err := pick(*sysFlag, knownSystems, "system")
	if err != nil {
		return err
	}
	wlNames, err := selectWorkloads(*wlFlag, *mode)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if *binDir == "" {
		dir, err := os.MkdirTemp("", "adapterkit-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := build(dir, *cgo == cgoOff); err != nil {
			return err
		}
		*binDir = dir
	}
	var systems []*system
	for _, n := range sysNames {
		s, err := newSystem(n, *binDir)
		if err != nil {
			return err
		}
		systems = append(systems, s)
	}
	env := &runEnv{binDir: *binDir, self: self, warmup: *warmup, duration: *duration, regmemN: *regmemN}
	var report bytes.Buffer
	var allVerdicts [][]verdict
	failed := false
	for i := range *runs {
		started := time.Now()
		rs, ok := measure(context.Background(), i+1, systems, wlNames, *reps, env)
		failed = failed || !ok
		header := fmt.Sprintf("adapterkit bench: run %d of %d, %d repetitions, medians; steady %s after %s warm-up; children built with -cgo %s; %s; took %s",
			i+1, *runs, *reps, *duration, *warmup, *cgo, machine(), time.Since(started).Round(time.Second))
		if err := rs.writeReport(os.Stdout, header, *withJSON); err != nil {
			return err
		}
		fmt.Println()
		if err := rs.writeReport(&report, header, true); err != nil {
			return err
		}
		fmt.Fprintln(&report)
		allVerdicts = append(allVerdicts, rs.verdicts())
	}
	if *runs > 1 {
		writeSummary(os.Stdout, allVerdicts)
		writeSummary(&report, allVerdicts)
	}
	if *out != "" {
		if err := os.WriteFile(*out, report.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("some runs failed (see above)")
	}
	return nil
}

// measure runs every workload of wlNames reps times on the systems that take part in
// it and returns the results of run number run; ok is false if anything failed.
func measure(ctx context.Context, run int, systems []*system, wlNames []string, reps int, env *runEnv) (rs *results, ok bool) {
	var names []string
	for _, s := range systems {
		names = append(names, s.name)
	}
	rs = &results{run: run, systems: names, workloads: wlNames, by: map[string]map[string]*result{}}
	ok = true
	for _, wl := range workloads {
		if !slices.Contains(wlNames, wl.name) {
			continue
		}
		var part []*system
		for _, s := range systems {
			if takesPart(s.name, wl.name) {
				part = append(part, s)
			}
		}
		for rep := range reps {
			if wl.blocks != nil {
				t := time.Now()
				ms, errs := runBlocked(ctx, wl.blocks, rotate(part, rep))
				for _, s := range part {
					ok = !rs.record(wl.name, rep, s.name, ms[s.name], errs[s.name]) && ok
				}
				fmt.Fprintf(os.Stderr, "%-12s rep %d all systems interleaved %6.2fs\n", wl.name, rep+1, time.Since(t).Seconds())
				continue
			}
			for _, s := range rotate(part, rep) {
				t := time.Now()
				m, err := wl.run(ctx, s, env)
				if !rs.record(wl.name, rep, s.name, m, err) {
					fmt.Fprintf(os.Stderr, "%-12s rep %d %-18s %6.2fs\n", wl.name, rep+1, s.name, time.Since(t).Seconds())
				}
				ok = err == nil && ok
			}
		}
		for _, s := range part {
			r := rs.get(wl.name, s.name)
			r.Median = medians(r.Runs)
		}
	}
	return rs, ok
}

// baseWorkloads are the workload names without their modes (what -mode expands).
func baseWorkloads() []string {
	var out []string
	for _, n := range workloadNames() {
		if !strings.HasSuffix(n, steadySuffix) {
			out = append(out, n)
		}
	}
	return out
}

// pick splits a comma-separated list and checks each name against known.
func pick(list string, known []string, what string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown %s %q (known: %s)", what, n, strings.Join(known, ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s selected", what)
	}
	return out, nil
}

// Values of -cgo.
const (
	cgoDefault = "default"
	cgoOff     = "off"
)

// build compiles the child programs into dir: the echo adapter from the root module
// (built there, with the root module's own go.mod), the go-plugin plugin and the floor
// from this module. By default each is built as a plain go build makes it, the way
// both projects tell their users to build: the SDK's adapter is statically linked
// either way (it does not import net), go-plugin's children import net, which with cgo
// enabled (where a C compiler is installed) links the C library dynamically. static
// builds every child with CGO_ENABLED=0.
func build(dir string, static bool) error {
	root, err := goOutput("", nil, "list", "-m", "-f", "{{.Dir}}", "github.com/adapterkit/adapterkit")
	if err != nil {
		return fmt.Errorf("locating the adapterkit module (run from e2e/bench): %w", err)
	}
	bench, err := goOutput("", nil, "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return fmt.Errorf("locating the bench module (run from e2e/bench): %w", err)
	}
	fmt.Fprintln(os.Stderr, "building the child programs into", dir)
	steps := []struct{ dir, out, pkg string }{
		{root, binEcho, "./examples/echo"},
		{root, binBlobs, "./examples/blobs"},
		{bench, binGP, "./cmd/gpecho"},
		{bench, binFloor, "./cmd/floorecho"},
		{bench, binPing, "./cmd/pingpong"},
	}
	var env []string
	if static {
		env = []string{"CGO_ENABLED=0"}
	}
	for _, s := range steps {
		if _, err := goOutput(s.dir, env, "build", "-o", filepath.Join(dir, s.out), s.pkg); err != nil {
			return fmt.Errorf("building %s: %w", s.pkg, err)
		}
	}
	_, err = adapterDir(dir)
	return err
}

// goOutput runs the go command in dir ("" means the current directory) with env added
// to the environment, and returns its trimmed standard output.
func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
