// Package registry is what a host embeds: adapters found by absolute path or in
// directories, opened with one call, and bound to typed Go clients whose methods are
// the adapter's methods.
//
// In the module's layers it sits above discovery, lifecycle and the layers below them,
// and below controlplane and adapterctl; it never depends on the adapter SDK (plugin)
// or on the control plane.
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
// json tag names matched exactly, one-line errors naming the field). A Go type with the service's
// methods is a few lines around the *[Client] NewClient returns (examples/thermometer/client).
//
// A host calls through this package, in one of two ways: typed, [Call] with a contract
// method through a [Client], and raw, [Handle.Call] with JSON params in and the JSON
// result out ([NewStream] reads a polled stream through a contract method as typed
// calls; [Upload] and [Download] move a byte stream of any size through a contract's
// upload and download methods, in chunks that fit the frame). Errors are the runtime's typed errors, the same for both: runtime.CodeOf(err),
// runtime.IsUncertain(err) and so on work on everything a call returns.
//
// The raw call is the same call at every layer below: lifecycle.Supervisor.Call (the
// supervised, restarted adapter a Handle holds), lifecycle.Adapter.Call (one adapter
// process) and runtime.Conn.Call (one protocol connection). Those are for programs that
// embed a lower layer themselves, as adapterctl uses lifecycle directly; nothing
// reachable from a Handle exposes them ([Handle.Status] and [Handle.Stats] are
// snapshots, not the process), so a call always goes through the Handle's restarts and
// only [Handle.Close] ends the adapter.
//
// A long-running host may let its handles follow new versions of their adapters
// (Config.Upgrade, see [Upgrade]): a version dropped into a directory is started,
// proven (handshake, catalog against the contracts in use) and only then given the
// new calls, while the calls in flight finish on the old one; [Registry.Rescan] looks
// for new versions when the host calls it (adapterctl serve calls it when the
// directories change and periodically).
//
// [Registry.Close] ends every adapter it opened and proves their process trees gone,
// or reports those it could not (their package directories stay reserved).
package registry
