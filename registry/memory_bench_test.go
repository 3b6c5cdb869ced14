//go:build linux

package registry_test

import (
	"context"
	"flag"
	"os"
	gort "runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

const (
	idleAdapters = 300 // adapters open at once
	idleOpeners  = 8   // opened this many at a time
)

// idleProfile names a file prefix: BenchmarkRegistryIdleMemory then writes the heap
// (PREFIX.heap, inuse_space) and goroutine (PREFIX.goroutine, debug=1) profiles taken
// while the adapters are idle, to find what each one holds.
var idleProfile = flag.String("idleprofile", "", "write heap and goroutine profiles of the idle adapters to `prefix`.heap and .goroutine")

// writeIdleProfiles writes the profiles -idleprofile asks for.
func writeIdleProfiles(b *testing.B) {
	for _, p := range []struct {
		name  string
		debug int
	}{{"heap", 0}, {"goroutine", 1}} {
		f, err := os.Create(*idleProfile + "." + p.name)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup(p.name).WriteTo(f, p.debug); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// hostInUse is the host's heap and stacks in use after two collections (the second
// empties what sync.Pools kept through the first).
func hostInUse(b *testing.B) idleSample {
	var ms gort.MemStats
	gort.GC()
	gort.GC()
	gort.ReadMemStats(&ms)
	return idleSample{heap: float64(ms.HeapInuse), stack: float64(ms.StackInuse),
		goroutines: float64(gort.NumGoroutine()), threads: float64(threads(b))}
}

// idleSample is what hostInUse measures.
type idleSample struct{ heap, stack, goroutines, threads float64 }

// threads returns the number of the process's threads (each blocked in a system call
// holds one, with its stacks).
func threads(b *testing.B) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no Threads line in /proc/self/status")
	return 0
}

// What an open, idle adapter costs the host: idleAdapters echo adapters are opened
// through one Registry, idleOpeners at a time, each called once through a typed
// client, then left idle; the heap and stacks in use after a collection, minus the same
// before, divided by the number of adapters, is reported as bytes/adapter (and the
// goroutines each adds as goroutines/adapter). All are then closed, verified gone.
// Each iteration opens them all again: run it with -benchtime=1x.
func BenchmarkRegistryIdleMemory(b *testing.B) {
	blob := echoapi.Blob{S: "hello"}
	var sum idleSample
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		reg := registry.New(&registry.Config{Dirs: []string{adapterDir}})
		before := hostInUse(b)

		handles := make([]*registry.Handle, idleAdapters)
		clients := make([]*registry.Client, idleAdapters)
		next := make(chan int)
		errs := make(chan error, idleOpeners)
		var wg sync.WaitGroup
		for range idleOpeners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					h, err := reg.Open(ctx, "echo@~> 1.0", nil)
					if err == nil {
						handles[i] = h
						clients[i], err = registry.NewClient(h, echoapi.Service)
					}
					if err == nil {
						var got echoapi.Blob
						got, err = registry.Call(ctx, clients[i], echoapi.EchoBlob, blob)
						if err == nil && got != blob {
							b.Errorf("adapter %d echoed %q", i, got.S)
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	feed:
		for i := range idleAdapters {
			select {
			case next <- i:
			case err := <-errs:
				b.Error(err)
				break feed
			}
		}
		close(next)
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Error(err)
		}

		var after idleSample
		if !b.Failed() {
			b.StopTimer()
			after = hostInUse(b)
			if *idleProfile != "" {
				writeIdleProfiles(b)
			}
			b.StartTimer()
		}
		var pids []int
		for _, h := range handles {
			if h != nil {
				pids = append(pids, h.Status().Pid)
			}
		}
		gort.KeepAlive(clients)
		if err := reg.Close(ctx); err != nil {
			b.Errorf("registry Close: %v", err)
		}
		testkit.Gone(b, pids...)
		cancel()
		if b.Failed() {
			return
		}
		sum.heap += after.heap - before.heap
		sum.stack += after.stack - before.stack
		sum.goroutines += after.goroutines - before.goroutines
		sum.threads += after.threads - before.threads
	}
	n := float64(b.N * idleAdapters)
	b.ReportMetric((sum.heap+sum.stack)/n, "bytes/adapter")
	b.ReportMetric(sum.stack/n, "stack-bytes/adapter")
	b.ReportMetric(sum.goroutines/n, "goroutines/adapter")
	b.ReportMetric(sum.threads/n, "threads/adapter")
}
