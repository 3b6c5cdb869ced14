package lifecycle_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// An installer asks before it replaces a package's files: a directory is reserved
// while an adapter of it may still run (R63).
func ExampleReservations() {
	var res lifecycle.Reservations
	dir := "/opt/app/adapters/thermometer"
	fmt.Println(res.CanRelease(dir) == nil, res.Reserved())
	// Output: true []
}

// Open an adapter, call it, and end it verified.
func ExampleOpen() {
	ctx := context.Background()
	res := new(lifecycle.Reservations)
	a, err := lifecycle.Open(ctx, lifecycle.Config{
		Path:         "/opt/app/adapters/thermometer_v1.0.0",
		Reservations: res,
		OnExit: func(ev lifecycle.ExitEvent) {
			log.Printf("%s ended on its own: %v (cleanup: %v)", ev.Adapter.Name(), ev.Cause, ev.Cleanup)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := a.Call(ctx, "example.device.read", []byte(`{"probe":"inlet"}`))
	switch {
	case runtime.CodeOf(err) == wire.CodeUnavailable:
		log.Print("not advertised")
	case runtime.IsUncertain(err):
		log.Print("the adapter may have acted: ", err)
	case err != nil:
		log.Print(err)
	default:
		fmt.Printf("%s\n", v)
	}
	if err := a.Close(); err != nil {
		log.Print("not verified gone; ", a.PackageDir(), " stays reserved: ", err)
	}
}

// Keep an adapter running: restart it with backoff when it crashes.
func ExampleSupervise() {
	ctx := context.Background()
	s, err := lifecycle.Supervise(ctx, lifecycle.Config{Path: "/opt/app/adapters/echo_v1.2.0"},
		lifecycle.RestartPolicy{MaxRestarts: 5})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Call(ctx, "example.echo.echo", []byte(`{"hello":"world"}`)); err != nil {
		log.Print(err)
	}
}
