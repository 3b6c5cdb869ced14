package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/runtime/wire"
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

// Register records a client type for a service; Bind[*exampleDevice] on an open adapter
// then checks the adapter's catalog against it, as CheckCatalog does here with a
// catalog written by hand.
func ExampleRegister() {
	reg := registry.New(nil)
	defer reg.Close(context.Background())

	err := registry.Register(reg, exampleDeviceService, func(c *registry.Client) *exampleDevice {
		return &exampleDevice{c: c}
	})
	fmt.Println("register:", err)

	// The catalog of the specification's example adapter.
	cat := &wire.Catalog{Protocol: 1, Services: []wire.Service{
		{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}},
	}}
	fmt.Println("catalog fits:", registry.CheckCatalog(cat, exampleDeviceService) == nil)

	// An invalid contract is refused when registering.
	err = registry.Register(reg, contract.NewService("device", 1),
		func(c *registry.Client) *exampleDevice { return &exampleDevice{c: c} })
	fmt.Println("bad registration:", errors.Is(err, registry.ErrInvalidService))
	// Output:
	// register: <nil>
	// catalog fits: true
	// bad registration: true
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

// New takes a nil config. A reference that looks like a path must be absolute: it is
// cleaned, and a relative one is refused, never resolved against the working directory
// (R61, A31).
func ExampleRegistry_Resolve() {
	reg := registry.New(nil)
	ctx := context.Background()
	defer reg.Close(ctx)

	sep := string(filepath.Separator)
	p, err := reg.Resolve(ctx, os.TempDir()+sep+"adapters"+sep+".."+sep+"thermo_v1.0.0")
	fmt.Println(p == filepath.Join(os.TempDir(), "thermo_v1.0.0"), err)

	_, err = reg.Resolve(ctx, filepath.Join("adapters", "thermo_v1.0.0"))
	fmt.Println(errors.Is(err, platform.ErrNotAbsolute))

	fmt.Println(registry.IsPath("thermo@~> 1.0"), registry.IsPath("./thermo"))
	// Output:
	// true <nil>
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

// A typed client bound to the thermometer adapter found in a directory. It needs the
// adapter binary (`make adapters`), so it is compiled but not run.
func ExampleBind() {
	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
	defer reg.Close(ctx)
	if err := registry.Register(reg, exampleDeviceService, func(c *registry.Client) *exampleDevice {
		return &exampleDevice{c: c}
	}); err != nil {
		fmt.Println(err)
		return
	}
	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, err := registry.Bind[*exampleDevice](h)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := dev.Read(ctx, "inlet")
	fmt.Println(r.Celsius, err)
}

// A console's output read as a polled stream: the session is started with a typed call
// of the console's contract (examples/console/consoleapi), each Read of the stream is a
// waiting read in the adapter (A34), and Close closes the session. It needs the console
// adapter binary (`make adapters`), so it is compiled but not run.
func ExampleHandle_Stream() {
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
	st := h.Stream(ctx, registry.StreamOptions{
		Read: consoleapi.Read.Name(), Close: consoleapi.Close.Name(),
		Params: map[string]any{"session": started.Session},
	})
	defer st.Close()
	out, err := io.ReadAll(st)
	fmt.Printf("%q %v\n", out, err)
}

// WithLogLevel sets the level of the adapters' own loggers (plugin.Logger) in an
// environment.
func ExampleWithLogLevel() {
	env := registry.WithLogLevel([]string{"TZ=UTC"}, hclog.Debug)
	fmt.Println(env)
	// Output: [TZ=UTC ADAPTERKIT_LOG_LEVEL=debug]
}
