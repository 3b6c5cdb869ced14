// Command bench compares adapterkit with hashicorp/go-plugin v1.8.0 (over net/rpc and
// over gRPC, its defaults) and with a floor, the same length-prefixed JSON over a
// child's stdin and stdout written the plainest way (encoding/json, one reader
// goroutine, a map of pending ids), on the same workloads:
//
//   - spawn: launch to first successful call, and close (adapterkit: process tree
//     verified gone; go-plugin: its Kill; floor: close stdin and wait);
//   - rtt: one caller, 64-byte params: p50/p99 in µs and calls/s;
//   - par32: 32 concurrent callers on one connection: calls/s;
//   - big: echo of a 1 MiB string (and 3.9 MiB for the pipe systems): MB/s, counting
//     the payload both ways;
//   - fanout: 100 connections opened at once, 10 calls each: total time and the host's
//     memory per idle open connection (heap and stacks in use after GC, processes
//     excluded);
//   - memory: peak RSS (VmHWM) of a host process and of the one adapter it drives
//     through the same calls.
//
// Systems are interleaved. spawn, fanout and memory run one system at a time, in an
// order that rotates with every repetition (A B C D, B C D A, ...). rtt, par32 and big
// open one connection per system and alternate blocks of calls among them, again in
// rotating order, so that every system meets the same load of a shared machine. The
// table shows the medians over the repetitions.
//
// The child programs are built first into a temporary directory: examples/echo of the
// root module, cmd/gpecho (go-plugin) and cmd/floorecho (floor) of this module.
//
// Run it from e2e/bench (it locates the modules with the go command):
//
//	go run . [-reps 5] [-workloads spawn,rtt,...] [-systems adapterkit,floor,...] [-json] [-out FILE] [-cpuprofile FILE]
//
// The table and the targets of the issue go to standard output, progress to standard
// error; -json adds one JSON line per (system, workload), -out writes the same report
// to FILE as well.
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
	reps := fs.Int("reps", 5, "repetitions of every (system, workload)")
	wlFlag := fs.String("workloads", strings.Join(workloadNames(), ","), "workloads to run, comma-separated")
	sysFlag := fs.String("systems", strings.Join(allSystems, ","), "systems to compare, comma-separated (also: "+sysSandbox+", Linux)")
	withJSON := fs.Bool("json", false, "also print one JSON line per (system, workload)")
	out := fs.String("out", "", "also write the report (with the JSON lines) to this file")
	binDir := fs.String("bin", "", "directory of already built child programs (default: build them)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of this host process to this file")
	memhost := fs.String("memhost", "", "internal: run as the memory workload's host process for this system")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *memhost != "" {
		return memHost(*memhost, *binDir)
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
	if *reps < 1 {
		return fmt.Errorf("-reps must be at least 1")
	}
	sysNames, err := pick(*sysFlag, knownSystems, "system")
	if err != nil {
		return err
	}
	wlNames, err := pick(*wlFlag, workloadNames(), "workload")
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
		if err := build(dir); err != nil {
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
	env := &runEnv{binDir: *binDir, self: self}
	rs := &results{systems: sysNames, workloads: wlNames, by: map[string]map[string]*result{}}
	started := time.Now()
	failed := false
	ctx := context.Background()
	for _, wl := range workloads {
		if !slices.Contains(wlNames, wl.name) {
			continue
		}
		for rep := range *reps {
			if wl.blocks != nil {
				t := time.Now()
				ms, errs := runBlocked(ctx, wl.blocks, rotate(systems, rep))
				for _, s := range systems {
					failed = rs.record(wl.name, rep, s.name, ms[s.name], errs[s.name]) || failed
				}
				fmt.Fprintf(os.Stderr, "%-7s rep %d all systems interleaved %6.2fs\n", wl.name, rep+1, time.Since(t).Seconds())
				continue
			}
			for _, s := range rotate(systems, rep) {
				t := time.Now()
				m, err := wl.run(ctx, s, env)
				if !rs.record(wl.name, rep, s.name, m, err) {
					fmt.Fprintf(os.Stderr, "%-7s rep %d %-16s %6.2fs\n", wl.name, rep+1, s.name, time.Since(t).Seconds())
				}
				failed = err != nil || failed
			}
		}
		for _, s := range sysNames {
			r := rs.get(wl.name, s)
			r.Median = medians(r.Runs)
		}
	}
	header := fmt.Sprintf("adapterkit bench: %d repetitions, medians; %s; took %s",
		*reps, machine(), time.Since(started).Round(time.Second))
	if err := rs.writeReport(os.Stdout, header, *withJSON); err != nil {
		return err
	}
	if *out != "" {
		var buf bytes.Buffer
		if err := rs.writeReport(&buf, header, true); err != nil {
			return err
		}
		if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("some runs failed (see above)")
	}
	return nil
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

// build compiles the child programs into dir: the echo adapter from the root module
// (built there, with the root module's own go.mod), the go-plugin plugin and the floor
// from this module.
func build(dir string) error {
	root, err := goOutput("", "list", "-m", "-f", "{{.Dir}}", "github.com/adapterkit/adapterkit")
	if err != nil {
		return fmt.Errorf("locating the adapterkit module (run from e2e/bench): %w", err)
	}
	bench, err := goOutput("", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return fmt.Errorf("locating the bench module (run from e2e/bench): %w", err)
	}
	fmt.Fprintln(os.Stderr, "building the child programs into", dir)
	steps := []struct{ dir, out, pkg string }{
		{root, binEcho, "./examples/echo"},
		{bench, binGP, "./cmd/gpecho"},
		{bench, binFloor, "./cmd/floorecho"},
	}
	// Every child is built the same way, as a Go adapter is best shipped: statically
	// linked (CGO_ENABLED=0), so that starting it loads no C library. The net package
	// (go-plugin's sockets, and the SDK through mapstructure) would otherwise link libc.
	for _, s := range steps {
		if _, err := goOutput(s.dir, "build", "-o", filepath.Join(dir, s.out), s.pkg); err != nil {
			return fmt.Errorf("building %s: %w", s.pkg, err)
		}
	}
	return nil
}

// goOutput runs the go command in dir ("" means the current directory), without cgo,
// and returns its trimmed standard output.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
