package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/examples/thermometer/client"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for an event so that a broken test fails instead of hanging;
// nothing asserts on time.
const wait = 30 * time.Second

// buildThermometer builds examples/thermometer into a fresh directory under the
// discovery naming convention and returns the directory.
func buildThermometer(t *testing.T) string {
	t.Helper()
	return testkit.BuildT(t, testkit.Thermometer)
}

// waitFor polls cond until it holds, failing the test after the bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, wait, cond, "timed out waiting for %s", what)
}

func TestDeviceAgainstThermometer(t *testing.T) {
	dir := buildThermometer(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	reg := registry.New(&registry.Config{Dirs: []string{dir}})
	h, err := reg.Open(ctx, "thermometer@>= 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := client.New(h)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Client() == nil {
		t.Fatal("no registry client")
	}

	t.Run("inlet", func(t *testing.T) {
		r, err := dev.Read(ctx, client.ReadParams{Probe: "inlet"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Celsius != 21.5 {
			t.Fatalf("inlet reads %v °C, want 21.5", r.Celsius)
		}
	})

	// R36, R38, R39: the cancelled read returns aborted and uncertain at once; the
	// adapter answers the cancel and frees the identity's slot.
	t.Run("slow cancelled", func(t *testing.T) {
		rctx, rcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := dev.Read(rctx, client.ReadParams{Probe: "slow"})
			done <- err
		}()
		waitFor(t, "the slow read to be in flight", func() bool { return h.Status().InFlight == 1 })
		rcancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(wait):
			t.Fatal("the cancelled read did not return")
		}
		if runtime.CodeOf(err) != wire.CodeAborted {
			t.Fatalf("cancelled read: %v, want aborted", err)
		}
		if !runtime.IsUncertain(err) {
			t.Fatalf("cancelled read after send should be uncertain: %v", err)
		}
		waitFor(t, "the adapter to answer the cancel", func() bool { return h.Status().InFlight == 0 })
	})

	t.Run("unknown probe", func(t *testing.T) {
		_, err := dev.Read(ctx, client.ReadParams{Probe: "outlet"})
		var ce *runtime.CallError
		if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeInvalid {
			t.Fatalf("unknown probe: %v, want invalid", err)
		}
		if ce.Uncertain || ce.NeverStarted || ce.Message != "unknown probe" {
			t.Fatalf("unknown probe: %+v", ce)
		}
	})

	// R63: closing the registry proves the adapter's process tree gone.
	if err := reg.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// New checks the adapter's catalog against the client's service description.
func TestServiceAgainstCatalogs(t *testing.T) {
	cat := func(version int, methods ...string) *wire.Catalog {
		return &wire.Catalog{Protocol: 1, Services: []wire.Service{{ID: "example.device", Version: version, Methods: methods}}}
	}
	for _, tc := range []struct {
		name string
		cat  *wire.Catalog
		want error
	}{
		{"the thermometer's catalog", cat(1, "example.device.read"), nil},
		{"more methods than needed", cat(1, "example.device.read", "example.device.write"), nil},
		{"another version", cat(2, "example.device.read"), registry.ErrVersionMismatch},
		{"read missing", cat(1, "example.device.write"), registry.ErrMethodMissing},
		{"another service", &wire.Catalog{Protocol: 1, Services: []wire.Service{{ID: "example.echo", Version: 1, Methods: []string{"example.echo.echo"}}}}, registry.ErrServiceMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := registry.CheckCatalog(tc.cat, device.Service)
			if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
				t.Fatalf("CheckCatalog: %v, want %v", err, tc.want)
			}
		})
	}
}
