//go:build linux

package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

// triple is a 3-field struct: example.echo.record's params and result without pad.
type triple struct {
	Probe string `json:"probe"`
	Seq   int64  `json:"seq"`
	Unit  string `json:"unit"`
}

var (
	tripleService = contract.NewService("example.echo", 1)
	tripleRecord  = contract.NewMethod[triple, triple](tripleService, "record")
)

// openEcho opens the echo adapter process in a registry closed when b ends.
func openEcho(b *testing.B) *registry.Handle {
	reg := registry.New(&registry.Config{Dirs: []string{adapterDir}})
	b.Cleanup(func() { reg.Close(context.Background()) })
	h, err := reg.Open(context.Background(), "echo@~> 1.0", nil)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// A typed call of a 3-field struct (example.echo.record) to the echo adapter process:
// the allocations reported are the host's alone (the adapter is another process).
func BenchmarkTypedCall(b *testing.B) {
	ctx := context.Background()
	h := openEcho(b)
	c, err := registry.NewClient(h, tripleService)
	if err != nil {
		b.Fatal(err)
	}
	rec := triple{Probe: "inlet", Seq: 42, Unit: "celsius"}
	b.ReportAllocs()
	for b.Loop() {
		got, err := registry.Call(ctx, c, tripleRecord, rec)
		if err != nil || got != rec {
			b.Fatal(got, err)
		}
	}
}

// The same call on the raw path, for comparison.
func BenchmarkRawCall(b *testing.B) {
	ctx := context.Background()
	h := openEcho(b)
	params := []byte(`{"probe":"inlet","seq":42,"unit":"celsius"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, echoapi.Echo.Name(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// A typed call whose params and result are a struct with one 1 MiB string
// (example.echo.blob), to the echo adapter process.
func BenchmarkTypedCall1MiB(b *testing.B) { benchTypedBlob(b, 1<<20) }

// The same 1 MiB echo on the raw path (example.echo.echo), for comparison.
func BenchmarkRawCall1MiB(b *testing.B) { benchRawBlob(b, 1<<20) }

// The typed echo of the largest string e2e/bench's big workload sends (3.9 MiB).
func BenchmarkTypedCall3_9MiB(b *testing.B) { benchTypedBlob(b, 39<<20/10) }

// The same 3.9 MiB echo on the raw path.
func BenchmarkRawCall3_9MiB(b *testing.B) { benchRawBlob(b, 39<<20/10) }

func benchTypedBlob(b *testing.B, n int) {
	ctx := context.Background()
	h := openEcho(b)
	c, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		b.Fatal(err)
	}
	blob := echoapi.Blob{S: strings.Repeat("x", n)}
	b.SetBytes(2 * int64(n))
	b.ReportAllocs()
	report := procFigures(b, h.Status().Pid)
	for b.Loop() {
		got, err := registry.Call(ctx, c, echoapi.EchoBlob, blob)
		if err != nil || len(got.S) != len(blob.S) {
			b.Fatal(len(got.S), err)
		}
	}
	report()
}

func benchRawBlob(b *testing.B, n int) {
	ctx := context.Background()
	h := openEcho(b)
	params := []byte(`{"s":"` + strings.Repeat("x", n) + `"}`)
	b.SetBytes(2 * int64(n))
	b.ReportAllocs()
	report := procFigures(b, h.Status().Pid)
	for b.Loop() {
		if res, err := h.Call(ctx, echoapi.Echo.Name(), params); err != nil || len(res) != len(params) {
			b.Fatal(len(res), err)
		}
	}
	report()
}

// procFigures returns the function that reports, per call of b's loop since
// procFigures was called, the minor page faults and the CPU time (user and system, in
// µs) of this process (host-) and of the adapter process pid (adapter-), as /proc
// counts them. On the large echoes the time per call follows the adapter's faults (its
// collector gives a freed frame's memory back to the kernel, and the next frame faults
// it in again) more than the code of either path.
func procFigures(b *testing.B, pid int) func() {
	h0, a0 := procStat(b, os.Getpid()), procStat(b, pid)
	return func() {
		h1, a1 := procStat(b, os.Getpid()), procStat(b, pid)
		n := float64(b.N)
		b.ReportMetric((h1.faults-h0.faults)/n, "host-faults/op")
		b.ReportMetric((a1.faults-a0.faults)/n, "adapter-faults/op")
		b.ReportMetric((h1.cpu-h0.cpu)*1e6/n, "host-cpu-us/op")
		b.ReportMetric((a1.cpu-a0.cpu)*1e6/n, "adapter-cpu-us/op")
	}
}

// procCounts are a process's minor page faults and CPU seconds.
type procCounts struct{ faults, cpu float64 }

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, 100 on Linux.
const userHZ = 100

// procStat reads pid's counts from /proc/PID/stat (fields 10, 14 and 15).
func procStat(b *testing.B, pid int) procCounts {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // from field 3, the state
	num := func(field int) float64 {
		v, err := strconv.ParseFloat(f[field-3], 64)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	return procCounts{faults: num(10), cpu: (num(14) + num(15)) / userHZ}
}

// A start as a host makes it: a registry opens the echo adapter by its path, a typed
// client makes the first call (example.echo.record), and the handle and registry are
// closed with the verified close. ns/op is launch to verified close; the host's
// allocations are its start work (the adapter is another process).
func BenchmarkStartFirstCall(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(adapterDir, testkit.Echo.Name)
	rec := echoapi.Record{Probe: "inlet", Seq: 42, Unit: "celsius", Pad: "0123456789ab"}
	b.ReportAllocs()
	for b.Loop() {
		reg := registry.New(nil)
		h, err := reg.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		c, err := registry.NewClient(h, echoapi.Service)
		if err != nil {
			b.Fatal(err)
		}
		if got, err := registry.Call(ctx, c, echoapi.EchoRecord, rec); err != nil || got != rec {
			b.Fatal(got, err)
		}
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
		if err := reg.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
