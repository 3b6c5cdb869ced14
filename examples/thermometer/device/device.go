// Package device is the contract of service example.device version 1, the service of
// the thermometer example adapter: declared once, imported by the adapter
// (examples/thermometer), which implements it, and by its hosts
// (examples/thermometer/client), which call it.
package device

import "github.com/adapterkit/adapterkit/contract"

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

var (
	// Service is example.device version 1.
	Service = contract.NewService("example.device", 1)
	// Read reads one probe: "inlet" reads 21.5 °C, "slow" waits for a cancel, others
	// are answered invalid "unknown probe".
	Read = contract.NewMethod[ReadParams, Reading](Service, "read")
)
