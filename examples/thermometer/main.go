// Command thermometer is the example adapter of the protocol specification: one
// service, example.device version 1, with one method, example.device.read.
//
// Params are {"probe": string}. The probe "inlet" reads {"celsius":21.5}; the probe
// "slow" waits until the host cancels the request and then answers aborted "Read
// canceled", as in the specification's example exchange; any other probe is answered
// invalid "unknown probe".
//
// The service is declared once, in examples/thermometer/device, which its hosts import
// too.
package main

import (
	"context"

	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// log is the adapter's logger: JSON records on stderr that the host shows under the
// adapter's name.
var log = plugin.Logger()

func read(ctx context.Context, p device.ReadParams) (device.Reading, error) {
	log.Info("reading", "probe", p.Probe)
	switch p.Probe {
	case "inlet":
		return device.Reading{Celsius: 21.5}, nil
	case "slow":
		<-ctx.Done()
		return device.Reading{}, plugin.Errorf(wire.CodeAborted, "Read canceled")
	}
	return device.Reading{}, plugin.Errorf(wire.CodeInvalid, "unknown probe")
}

// newAdapter returns the thermometer adapter.
func newAdapter() *plugin.Adapter {
	svc := plugin.ServiceOf(device.Service)
	plugin.Implement(svc, device.Read, read)
	return &plugin.Adapter{Services: []*plugin.Service{svc}}
}

func main() { plugin.Main(newAdapter()) }
