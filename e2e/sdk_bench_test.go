package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/registry"
)

// BenchmarkSDKEcho compares each SDK's echo adapter with the Go SDK's examples/echo
// through the same host: "rtt" is one caller's round trip of a small echo (p50-µs is
// its median), "par32" is 32 callers at once (calls/s). Run it with
//
//	make adapters && ADAPTERKIT_SDK_ADAPTERS=$PWD/build/adapters go test -run '^$' -bench SDKEcho ./e2e/
//
// (`make bench-sdk`). It is a measurement, not a test: nothing asserts on speed.
func BenchmarkSDKEcho(b *testing.B) {
	dir := sdkAdapterDir()
	if dir == "" {
		b.Skip("set ADAPTERKIT_SDK_ADAPTERS to the directory `make adapters` filled")
	}
	adapters := []struct{ name, path string }{{"go", buildBin("examples/echo")}}
	for _, e := range sdkEchoes {
		p := filepath.Join(dir, e.file)
		if _, err := os.Stat(p); err != nil { // not built on this machine: `make adapters` said why
			b.Logf("%s left out: %v", e.name, err)
			continue
		}
		adapters = append(adapters, struct{ name, path string }{e.name, p})
	}
	params := json.RawMessage(`{"probe":"inlet","n":12345,"ok":true}`)
	for _, a := range adapters {
		reg := registry.New(&registry.Config{Env: []string{"PATH=" + os.Getenv("PATH")}})
		ctx := context.Background()
		h, err := reg.Open(ctx, a.path, nil)
		if err != nil {
			b.Fatalf("open %s: %v", a.name, err)
		}
		b.Run(a.name+"/rtt", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for range b.N {
				t := time.Now()
				if _, err := h.Call(ctx, "example.echo.echo", params); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		})
		b.Run(a.name+"/par32", func(b *testing.B) {
			var wg sync.WaitGroup
			per := (b.N + 31) / 32
			start := time.Now()
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range per {
						if _, err := h.Call(ctx, "example.echo.echo", params); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*32)/time.Since(start).Seconds(), "calls/s")
		})
		if err := reg.Close(ctx); err != nil {
			b.Fatalf("close %s: %v", a.name, err)
		}
	}
}
