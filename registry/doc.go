// Package registry is what a host embeds: adapters found by absolute path or in
// directories, opened with one call, and bound to typed Go clients whose methods are
// the adapter's methods.
//
//	reg := registry.New(&registry.Config{Dirs: []string{"/opt/app/adapters"}})
//	defer reg.Close(context.Background())
//	h, err := reg.Open(ctx, "thermometer@~> 1.0", nil)
//	dev, err := registry.NewClient(h, device.Service) // checks the catalog
//	reading, err := registry.Call(ctx, dev, device.Read, device.ReadParams{Probe: "inlet"})
//
// A service is described once, with package contract, in a package the adapter and its
// hosts both import (device above); [NewClient] checks an adapter's catalog against
// it and [Call] calls one of its methods with typed params and result, encoded and
// decoded by package codec, the rules the adapter's SDK applies (exact numbers,
// mapstructure's names, one-line errors naming the field). A Go type with the service's
// methods is a few lines around a *[Client] ([Register] and [Bind] build it).
// [Handle.Call] is the raw way: JSON in, JSON out. Errors are the runtime's typed
// errors: errors.Is(err, runtime.ErrUnavailable), runtime.IsUncertain(err) and so on
// work on everything Call returns.
//
// [Registry.Close] ends every adapter it opened and proves their process trees gone,
// or reports those it could not (their package directories stay reserved).
package registry
