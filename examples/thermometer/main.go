// Command thermometer is the example adapter of the protocol specification: one
// service, example.device version 1, with one method, example.device.read.
//
// Params are {"probe": string}. The probe "inlet" reads {"celsius":21.5}; the probe
// "slow" waits until the host cancels the request and then answers aborted "Read
// canceled", as in the specification's example exchange; any other probe is answered
// invalid "unknown probe".
package main

import (
	"context"

	"github.com/adapterkit/adapterkit/plugin"
)

// readParams are the params of example.device.read.
type readParams struct {
	Probe string `json:"probe"`
}

// reading is the result of example.device.read.
type reading struct {
	Celsius float64 `json:"celsius"`
}

// log is the adapter's logger: JSON records on stderr that the host shows under the
// adapter's name.
var log = plugin.Logger()

func read(ctx context.Context, p readParams) (reading, error) {
	log.Info("reading", "probe", p.Probe)
	switch p.Probe {
	case "inlet":
		return reading{Celsius: 21.5}, nil
	case "slow":
		<-ctx.Done()
		return reading{}, plugin.Errorf(plugin.CodeAborted, "Read canceled")
	}
	return reading{}, plugin.Errorf(plugin.CodeInvalid, "unknown probe")
}

// newAdapter returns the thermometer adapter.
func newAdapter() *plugin.Adapter {
	svc := plugin.NewService("example.device", 1)
	plugin.Handle(svc, "example.device.read", read)
	return &plugin.Adapter{Services: []*plugin.Service{svc}}
}

func main() { plugin.Main(newAdapter()) }
