package contract_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
)

type readParams struct {
	Probe string `json:"probe"`
}

type reading struct {
	Celsius float64 `json:"celsius"`
}

func TestService(t *testing.T) {
	s := contract.NewService("example.device", 1)
	read := contract.NewMethod[readParams, reading](s, "read")
	contract.NewMethod[struct{}, struct{}](s, "reset")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if read.Name() != "example.device.read" || read.Service() != s {
		t.Fatalf("method %q of %p", read.Name(), read.Service())
	}
	if got := s.Methods(); !slices.Equal(got, []string{"example.device.read", "example.device.reset"}) {
		t.Fatalf("methods %v", got)
	}
	if !slices.Contains(s.Methods(), "example.device.read") || slices.Contains(s.Methods(), "example.device.write") {
		t.Fatal("Has")
	}
}

// R19-R25: what the catalog would refuse is refused when the service is described.
func TestInvalid(t *testing.T) {
	for name, s := range map[string]*contract.Service{
		"id not dotted": contract.NewService("device", 1),
		"version 0":     contract.NewService("example.device", 0),
		"bad method": func() *contract.Service {
			s := contract.NewService("example.device", 1)
			contract.NewMethod[int, int](s, "")
			return s
		}(),
		"twice": func() *contract.Service {
			s := contract.NewService("example.device", 1)
			contract.NewMethod[int, int](s, "read")
			contract.NewMethod[int, int](s, "read")
			return s
		}(),
	} {
		if err := s.Validate(); !errors.Is(err, contract.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func Example() {
	device := contract.NewService("example.device", 1)
	read := contract.NewMethod[readParams, reading](device, "read")
	fmt.Println(device.ID(), device.Version(), read.Name(), device.Validate())
	// Output: example.device 1 example.device.read <nil>
}
