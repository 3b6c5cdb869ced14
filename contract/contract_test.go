package contract_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

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

// A method whose params or result cannot come back as the same value is refused where
// it is declared, in one line naming the method, which side, the field and the type;
// the types real services send, and any, are accepted.
func TestTypes(t *testing.T) {
	type event struct {
		At   time.Time      `json:"at"`
		Addr netip.Addr     `json:"addr"`
		Wait time.Duration  `json:"wait"`
		Data []byte         `json:"data"`
		Any  any            `json:"any"`
		By   map[int64]bool `json:"by"`
	}
	ok := contract.NewService("example.types", 1)
	contract.NewMethod[event, map[netip.Addr]event](ok, "ok")
	contract.NewMethod[any, json.RawMessage](ok, "raw")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	type badResult struct {
		Inner struct {
			Z complex128 `json:"z"`
		} `json:"inner"`
	}
	bad := contract.NewService("example.types", 1)
	for _, c := range []struct {
		declare func()
		want    string
	}{
		{func() { contract.NewMethod[struct{ F func() }, struct{}](bad, "params") },
			`contract: invalid service description: method "example.types.params" params: field "F": func() cannot be sent`},
		{func() { contract.NewMethod[struct{}, badResult](bad, "result") },
			`contract: invalid service description: method "example.types.result" result: field "inner.z": complex128 cannot be sent`},
		{func() { contract.NewMethod[struct{ C chan int }, struct{}](bad, "chan") },
			`contract: invalid service description: method "example.types.chan" params: field "C": chan int cannot be sent`},
	} {
		err := declarePanics(c.declare)
		if !errors.Is(err, contract.ErrInvalid) || err.Error() != c.want {
			t.Errorf("NewMethod panicked with %v\nwant %s", err, c.want)
		}
	}
	if err := bad.Validate(); err != nil || len(bad.Methods()) != 0 {
		t.Errorf("a method refused at declaration was added: %v %q", err, bad.Methods())
	}
}

// declarePanics runs declare and returns the error it panicked with, or nil.
func declarePanics(declare func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err, _ = v.(error)
			if err == nil {
				err = fmt.Errorf("panic with a %T: %v", v, v)
			}
		}
	}()
	declare()
	return nil
}
