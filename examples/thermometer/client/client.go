// Package client is the host side of service example.device version 1, the service of
// the thermometer example adapter (examples/thermometer): a typed client whose methods
// are the service's methods, written in a few lines over the service's contract
// (examples/thermometer/device).
//
//	reg := registry.New(&registry.Config{Dirs: []string{dir}})
//	defer reg.Close(ctx)
//	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
//	dev, err := client.New(h)
//	r, err := dev.Read(ctx, client.ReadParams{Probe: "inlet"})
//
// Errors are the runtime's typed errors: runtime.CodeOf(err) is wire.CodeAborted after a
// cancelled read and wire.CodeInvalid for a probe the device does not have;
// runtime.IsUncertain(err) says the outcome is unknown.
package client

import (
	"context"

	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/registry"
)

// The types of the contract, under this package too.
type (
	// ReadParams are the params of example.device.read.
	ReadParams = device.ReadParams
	// Reading is the result of example.device.read.
	Reading = device.Reading
)

// Device is a typed client of one adapter's example.device service.
type Device struct{ c *registry.Client }

// New returns a Device on the adapter of h, after checking that its catalog has
// example.device version 1 with every method (a *registry.BindError otherwise).
func New(h *registry.Handle) (*Device, error) {
	c, err := registry.NewClient(h, device.Service)
	if err != nil {
		return nil, err
	}
	return &Device{c}, nil
}

// Client returns the registry client the Device is built around.
func (d *Device) Client() *registry.Client { return d.c }

// Read reads one probe. ctx bounds the call (the standard 30 s deadline applies when it
// has none); cancelling it sends cancel to the adapter and returns an aborted error.
func (d *Device) Read(ctx context.Context, p ReadParams) (Reading, error) {
	return registry.Call(ctx, d.c, device.Read, p)
}
