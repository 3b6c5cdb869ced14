// Package client is the host side of service example.device version 1, the service of
// the thermometer example adapter (examples/thermometer): a typed client whose methods
// are the service's methods.
//
//	reg := registry.New(&registry.Config{Dirs: []string{dir}})
//	defer reg.Close(ctx)
//	if err := client.Register(reg); err != nil { ... }
//	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
//	dev, err := registry.Bind[*client.Device](h)
//	r, err := dev.Read(ctx, client.ReadParams{Probe: "inlet"})
//
// Errors are the runtime's typed errors: errors.Is(err, runtime.ErrAborted) after a
// cancelled read, errors.Is(err, runtime.ErrInvalid) for a probe the device does not
// have, runtime.IsUncertain(err) when the outcome is unknown.
package client

import (
	"context"

	"github.com/adapterkit/adapterkit/registry"
)

// The service this client speaks.
const (
	// ServiceID is the id of the service in the adapter's catalog.
	ServiceID = "example.device"
	// Version is the service version (its contract) this client speaks.
	Version = 1
	// MethodRead reads one probe.
	MethodRead = "example.device.read"
)

// Service returns the description of the service that [Register] records.
func Service() registry.Service {
	return registry.Service{ID: ServiceID, Version: Version, Methods: []string{MethodRead}}
}

// Device is a typed client of one adapter's example.device service. Build it with
// registry.Bind[*client.Device] after [Register].
type Device struct {
	c *registry.Client
}

// New returns a Device over a bound registry client; [Register] hands it to the
// registry, which calls it from registry.Bind.
func New(c *registry.Client) *Device { return &Device{c: c} }

// Register records *Device as the client type of example.device version 1 in r, so that
// registry.Bind[*client.Device] checks an adapter's catalog and returns a Device.
func Register(r *registry.Registry) error {
	return registry.Register(r, Service(), New)
}

// Client returns the registry client the Device is built around.
func (d *Device) Client() *registry.Client { return d.c }

// ReadParams are the params of example.device.read.
type ReadParams struct {
	// Probe names the probe to read, e.g. "inlet".
	Probe string `json:"probe"`
}

// Reading is the result of example.device.read.
type Reading struct {
	// Celsius is the temperature read, in degrees Celsius.
	Celsius float64 `json:"celsius"`
}

// Read reads one probe. ctx bounds the call (the standard 30 s deadline applies when it
// has none); cancelling it sends cancel to the adapter and returns an aborted error.
func (d *Device) Read(ctx context.Context, p ReadParams) (Reading, error) {
	var r Reading
	if err := d.c.Invoke(ctx, MethodRead, p, &r); err != nil {
		return Reading{}, err
	}
	return r, nil
}
