//go:build linux

package registry_test

import (
	"context"
	"path/filepath"
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
func BenchmarkTypedCall1MiB(b *testing.B) {
	ctx := context.Background()
	h := openEcho(b)
	c, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		b.Fatal(err)
	}
	blob := echoapi.Blob{S: strings.Repeat("x", 1<<20)}
	b.SetBytes(2 << 20)
	b.ReportAllocs()
	for b.Loop() {
		got, err := registry.Call(ctx, c, echoapi.EchoBlob, blob)
		if err != nil || len(got.S) != len(blob.S) {
			b.Fatal(len(got.S), err)
		}
	}
}

// The same 1 MiB echo on the raw path (example.echo.echo), for comparison.
func BenchmarkRawCall1MiB(b *testing.B) {
	ctx := context.Background()
	h := openEcho(b)
	params := []byte(`{"s":"` + strings.Repeat("x", 1<<20) + `"}`)
	b.SetBytes(2 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := h.Call(ctx, echoapi.Echo.Name(), params); err != nil || len(res) != len(params) {
			b.Fatal(len(res), err)
		}
	}
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
