package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// memReport is what a memory host process prints: its own peak resident set and that
// of the one adapter it drove, in KiB (VmHWM of /proc/PID/status).
type memReport struct {
	HostKiB    int64 `json:"host_hwm_kib"`
	AdapterKiB int64 `json:"adapter_hwm_kib"`
}

// The memory host's work: the same calls for every system.
const (
	memRTTCalls = 2000
	memParCalls = 4000
	memBigCalls = 4
)

// runMemory runs the memory workload in a fresh host process (this executable with
// -memhost), so that the host's peak RSS is its own and not the bench's: the host
// opens one instance, runs memRTTCalls sequential calls, memParCalls calls from 32
// callers and memBigCalls 1 MiB echoes, reads the child's VmHWM, closes it, and
// reports its own VmHWM.
func runMemory(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	cmd := exec.CommandContext(ctx, env.self, "-memhost", s.name, "-bin", env.binDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("memory host: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r memReport
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return nil, fmt.Errorf("memory host output %q: %w", out, err)
	}
	return metrics{
		"host_peak_mib":    float64(r.HostKiB) / 1024,
		"adapter_peak_mib": float64(r.AdapterKiB) / 1024,
	}, nil
}

// memHost is the body of a memory host process (-memhost).
func memHost(name, binDir string) error {
	s, err := newSystem(name, binDir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	in, err := openInstance(ctx, s)
	if err != nil {
		return err
	}
	adapterKiB, werr := memWork(ctx, in)
	_, cerr := in.Close()
	if werr != nil {
		return werr
	}
	if cerr != nil && verifies(name) {
		return cerr
	}
	hostKiB, err := vmHWM("self")
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(memReport{HostKiB: hostKiB, AdapterKiB: adapterKiB})
}

// memWork drives in and returns the child's peak RSS in KiB, read before closing it.
func memWork(ctx context.Context, in instance) (int64, error) {
	for range memRTTCalls {
		if err := call(ctx, in, smallParams); err != nil {
			return 0, err
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range parCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= memParCalls {
				if err := call(ctx, in, smallParams); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		return 0, *e
	}
	p := bigSmall
	for range memBigCalls {
		if err := call(ctx, in, p); err != nil {
			return 0, err
		}
	}
	return vmHWM(strconv.Itoa(in.Pid()))
}

// vmHWM reads the peak resident set size (VmHWM, KiB) of /proc/<pid>/status.
func vmHWM(pid string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			return strconv.ParseInt(v, 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no VmHWM in /proc/" + pid + "/status")
}
