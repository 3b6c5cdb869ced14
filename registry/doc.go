// Package registry is what a host embeds: adapters found by absolute path or in
// directories, opened with one call, and bound to typed Go clients whose methods are
// the adapter's methods.
//
//	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
//	defer reg.Close(context.Background())
//	registry.Register(reg, registry.Service{ID: "example.device", Version: 1,
//		Methods: []string{"example.device.read"}}, NewDevice)
//	h, err := reg.Open(ctx, "thermometer@~> 1.0", nil)
//	dev, err := registry.Bind[*Device](h)
//	reading, err := dev.Read(ctx, ReadParams{Probe: "inlet"})
//
// A typed client is any Go type built around a *[Client]; its methods call
// [Client.Invoke], which encodes params (a struct, a map or raw JSON) and decodes the
// result into a Go value with mapstructure (github.com/go-viper/mapstructure/v2, json
// tags). Errors are the runtime's typed errors: errors.Is(err, runtime.ErrUnavailable),
// runtime.IsUncertain(err) and so on work on everything Invoke returns.
//
// [Registry.Close] ends every adapter it opened and proves their process trees gone,
// or reports those it could not (their package directories stay reserved).
package registry
