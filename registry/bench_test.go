//go:build linux

package registry_test

import (
	"context"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
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

// A typed call of a 3-field struct (example.echo.record) to the echo adapter process:
// the allocations reported are the host's alone (the adapter is another process).
func BenchmarkTypedCall(b *testing.B) {
	reg := registry.New(&registry.Config{Dirs: []string{adapterDir}})
	defer reg.Close(context.Background())
	ctx := context.Background()
	h, err := reg.Open(ctx, "echo@~> 1.0", nil)
	if err != nil {
		b.Fatal(err)
	}
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
	reg := registry.New(&registry.Config{Dirs: []string{adapterDir}})
	defer reg.Close(context.Background())
	ctx := context.Background()
	h, err := reg.Open(ctx, "echo@~> 1.0", nil)
	if err != nil {
		b.Fatal(err)
	}
	params := []byte(`{"probe":"inlet","seq":42,"unit":"celsius"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, echoapi.Echo.Name(), params); err != nil {
			b.Fatal(err)
		}
	}
}
