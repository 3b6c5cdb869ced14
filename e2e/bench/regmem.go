package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// The regmem workload: the host memory each open adapter costs when opened through a
// registry.Registry, the way a host with many adapters holds them.
const (
	// regmemParallel is how many adapters are opened at a time.
	regmemParallel = 8
	// regmemIdle is how long the adapters stay idle, after their one call, before the
	// host's memory is read.
	regmemIdle = time.Second
	// regmemFDs is a generous count of the host's file descriptors per open adapter
	// (its stdin, stdout and stderr pipes, a pidfd, cgroup and namespace handles).
	regmemFDs = 8
)

// regmemReport is what a regmem host process prints.
type regmemReport struct {
	N        int     `json:"n"`
	KiB      float64 `json:"kib_per_adapter"`
	HeapKiB  float64 `json:"heap_kib_per_adapter"`
	StackKiB float64 `json:"stack_kib_per_adapter"`
	// Goroutines is the number of goroutines per open adapter.
	Goroutines float64 `json:"goroutines_per_adapter"`
	OpenS      float64 `json:"open_s"`
	CloseS     float64 `json:"close_s"`
	Verified   int     `json:"verified"`
}

// runRegmem runs the regmem workload in a fresh host process (this executable with
// -regmemhost), so that what earlier workloads left in the bench's heap counts for
// nothing.
func runRegmem(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	cmd := exec.CommandContext(ctx, env.self, "-regmemhost", s.name, "-bin", env.binDir,
		"-regmem-n", strconv.Itoa(env.regmemN))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("regmem host: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r regmemReport
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return nil, fmt.Errorf("regmem host output %q: %w", out, err)
	}
	if r.N != env.regmemN || r.Verified != r.N {
		return nil, fmt.Errorf("regmem host: %d of %d adapters opened, %d closes verified", r.N, env.regmemN, r.Verified)
	}
	return metrics{
		"kib_per_adapter":        r.KiB,
		"heap_kib_per_adapter":   r.HeapKiB,
		"stack_kib_per_adapter":  r.StackKiB,
		"goroutines_per_adapter": r.Goroutines,
		"open_s":                 r.OpenS,
		"close_s":                r.CloseS,
	}, nil
}

// regmemHost is the body of a regmem host process (-regmemhost): a registry over the
// build's adapters directory opens the echo adapter by name n times, regmemParallel at
// a time, and calls each once through its typed client; after regmemIdle it reads the
// host's memory, closes every adapter (each close verified) and checks that no child
// process is left. Memory per adapter = (HeapInuse + StackInuse after two collections,
// minus the same before the opens) / n, reported with its heap and stack parts and the
// goroutines per adapter. The directory is scanned before the first
// reading: the scan is the registry's, not any adapter's.
func regmemHost(name, binDir string, n int) error {
	if name != sysAdapterkit && name != sysSandbox {
		return fmt.Errorf("regmem runs on %s and %s only, not %s", sysAdapterkit, sysSandbox, name)
	}
	if n < 1 {
		return errors.New("-regmem-n must be at least 1")
	}
	if err := raiseNoFile(uint64(n*regmemFDs + 256)); err != nil {
		return err
	}
	dir, err := adapterDir(binDir)
	if err != nil {
		return err
	}
	cfg := &registry.Config{Dirs: []string{dir}}
	if name == sysSandbox {
		cfg.Sandbox = &platform.Sandbox{}
	}
	reg := registry.New(cfg)
	ctx := context.Background()
	defer reg.Close(ctx)
	if _, err := reg.Lookup(ctx, "echo"); err != nil {
		return err
	}
	rec := echoapi.Record{Probe: "inlet", Seq: 42, Unit: "celsius", Pad: "0123456789ab"}
	before := memSplit()
	start := time.Now()
	handles := make([]*registry.Handle, n)
	err = inParallel(n, func(i int) error {
		octx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		h, err := reg.Open(octx, "echo", nil)
		if err != nil {
			return fmt.Errorf("open %d: %w", i, err)
		}
		handles[i] = h
		c, err := registry.NewClient(h, echoapi.Service)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		got, err := registry.Call(octx, c, echoapi.EchoRecord, rec)
		if err != nil {
			return fmt.Errorf("call on %d: %w", i, err)
		}
		if got != rec {
			return fmt.Errorf("call on %d: echo mismatch: sent %+v, got %+v", i, rec, got)
		}
		return nil
	})
	opened := time.Since(start)
	if err == nil {
		time.Sleep(regmemIdle)
	}
	after := memSplit()
	closeStart := time.Now()
	var verified atomic.Int64
	cerr := inParallel(n, func(i int) error {
		if handles[i] == nil {
			return nil
		}
		if err := handles[i].Close(); err != nil {
			return fmt.Errorf("close %d: %w", i, err)
		}
		verified.Add(1)
		return nil
	})
	closed := time.Since(closeStart)
	if err = errors.Join(err, cerr, reg.Close(ctx)); err != nil {
		return err
	}
	if kids, err := liveChildren(); err != nil {
		return err
	} else if kids > 0 {
		return fmt.Errorf("%d child processes left after every adapter was closed", kids)
	}
	per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(n) }
	return json.NewEncoder(os.Stdout).Encode(regmemReport{
		N:          n,
		KiB:        per(after.heap+after.stack, before.heap+before.stack) / 1024,
		HeapKiB:    per(after.heap, before.heap) / 1024,
		StackKiB:   per(after.stack, before.stack) / 1024,
		Goroutines: per(after.goroutines, before.goroutines),
		OpenS:      opened.Seconds(),
		CloseS:     closed.Seconds(),
		Verified:   int(verified.Load()),
	})
}

// inParallel runs f(0) … f(n-1), regmemParallel at a time, and joins their errors.
func inParallel(n int, f func(i int) error) error {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range regmemParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// adapterDir returns the build directory's adapters directory, where the echo adapter
// has a name discovery accepts, making it (a hard link, else a copy) if missing.
func adapterDir(binDir string) (string, error) {
	dir := filepath.Join(binDir, adaptersDir)
	dst := filepath.Join(dir, echoAdapterName)
	if _, err := os.Stat(dst); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(binDir, binEcho)
	if os.Link(src, dst) == nil {
		return dir, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dir, out.Close()
}

// liveChildren counts this process's child processes (/proc/self/task/*/children).
func liveChildren() (int, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("cannot list child processes (/proc/self/task/*/children): %v", err)
	}
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) { // the thread ended
				continue
			}
			return 0, err
		}
		n += len(strings.Fields(string(b)))
	}
	return n, nil
}
