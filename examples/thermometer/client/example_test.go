package client_test

import (
	"context"
	"fmt"

	"github.com/adapterkit/adapterkit/examples/thermometer/client"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/registry"
)

// Example binds the typed client to the thermometer adapter found in a directory
// (build it with `make adapters`) and reads a probe. It needs the adapter binary, so it
// is compiled but not run by go test; the tests run the same steps against a fresh build.
func Example() {
	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, err := client.New(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := dev.Read(ctx, client.ReadParams{Probe: "inlet"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("inlet: %.1f °C\n", r.Celsius)
}

// The contract the client speaks and New checks an adapter's catalog against.
func Example_contract() {
	fmt.Println(device.Service.ID(), device.Service.Version(), device.Service.Methods())
	// Output: example.device 1 [example.device.read]
}
