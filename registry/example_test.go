package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

type exampleReadParams struct {
	Probe string `json:"probe"`
}

type exampleReading struct {
	Celsius float64 `json:"celsius"`
}

// The contract of service example.device version 1, declared once for the adapter and
// its hosts.
var (
	exampleDeviceService = contract.NewService("example.device", 1)
	exampleRead          = contract.NewMethod[exampleReadParams, exampleReading](exampleDeviceService, "read")
)

// exampleDevice is a typed client of service example.device version 1: a Go type built
// around a *registry.Client whose methods are the service's methods.
type exampleDevice struct{ c *registry.Client }

func (d *exampleDevice) Read(ctx context.Context, probe string) (exampleReading, error) {
	return registry.Call(ctx, d.c, exampleRead, exampleReadParams{Probe: probe})
}

// CheckCatalog says exactly why an adapter cannot serve a client: a service's version
// is its contract, so another version does not fit.
func ExampleCheckCatalog() {
	for _, s := range []wire.Service{
		{ID: "example.device", Version: 2, Methods: []string{"example.device.read"}},
		{ID: "example.device", Version: 1, Methods: []string{"example.device.write"}},
		{ID: "example.echo", Version: 1, Methods: []string{"example.echo.echo"}},
	} {
		cat := &wire.Catalog{Protocol: 1, Services: []wire.Service{s}}
		err := registry.CheckCatalog(cat, exampleDeviceService)
		switch {
		case errors.Is(err, registry.ErrVersionMismatch):
			fmt.Println("version mismatch:", err.(*registry.BindError).Detail)
		case errors.Is(err, registry.ErrMethodMissing):
			fmt.Println("method missing:", err.(*registry.BindError).Detail)
		case errors.Is(err, registry.ErrServiceMissing):
			fmt.Println("service missing")
		}
	}
	// Output:
	// version mismatch: adapter has version 2, client speaks 1
	// method missing: example.device.read
	// service missing
}

// New takes a nil config. A reference that looks like a path must be absolute: a
// relative one is refused, never resolved against the working directory.
func ExampleRegistry_Lookup() {
	reg := registry.New(nil)
	ctx := context.Background()
	defer reg.Close(ctx)

	_, err := reg.Lookup(ctx, filepath.Join("adapters", "thermo_v1.0.0"))
	fmt.Println(errors.Is(err, platform.ErrNotAbsolute))

	fmt.Println(registry.IsPath("thermo@~> 1.0"), registry.IsPath("./thermo"))
	// Output:
	// true
	// false true
}

// After Close a Registry refuses further use; with nothing open, Close has nothing to
// verify and returns nil.
func ExampleRegistry_Close() {
	reg := registry.New(nil)
	ctx := context.Background()
	fmt.Println(reg.Close(ctx))
	_, err := reg.Open(ctx, "thermometer", nil)
	fmt.Println(errors.Is(err, runtime.ErrClosed))
	// Output:
	// <nil>
	// true
}

// A typed client bound to the thermometer adapter found in a directory: a few lines
// around the client NewClient returns after checking the adapter's catalog. It needs
// the adapter binary (`make adapters`), so it is compiled but not run.
func ExampleNewClient() {
	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := registry.NewClient(h, exampleDeviceService)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev := &exampleDevice{c: c}
	r, err := dev.Read(ctx, "inlet")
	fmt.Println(r.Celsius, err)
}

// A console's output read as a polled stream: the session is started with a typed call
// of the console's contract (examples/console/consoleapi), each Read of the stream is a
// waiting read in the adapter, and the contract's close frees the session. It needs the console
// adapter binary (`make adapters`), so it is compiled but not run.
func ExampleNewStream() {
	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, "console", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := registry.NewClient(h, consoleapi.Service)
	if err != nil {
		fmt.Println(err)
		return
	}
	started, err := registry.Call(ctx, c, consoleapi.Start, consoleapi.StartParams{Command: "/bin/echo", Args: []string{"hi"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	st := registry.NewStream(ctx, c, consoleapi.Read, func(n int, wait time.Duration) consoleapi.ReadParams {
		return consoleapi.ReadParams{Session: started.Session, MaxBytes: n, WaitMS: wait.Milliseconds()}
	})
	out, err := io.ReadAll(st)
	st.Close()
	fmt.Printf("%q %v\n", out, err)
	_, err = registry.Call(ctx, c, consoleapi.Close, consoleapi.SessionParams(started))
	fmt.Println(err)
}
