// Package plugin is the adapter SDK: it lets an adapter written in Go speak the Adapter
// process protocol v1 (docs/protocol.md in the repository) over its stdin and stdout.
//
// In the module's layers it sits above codec and contract, beside runtime: it never
// depends on runtime, platform or lifecycle, since an adapter shares only the wire with
// its host.
//
// A service is declared once, with package contract, in a package the adapter and its
// hosts both import. The adapter makes a [Service] of the contract with [ServiceOf],
// registers a typed handler for each of its methods with [Implement], and calls [Main]
// from func main:
//
//	svc := plugin.ServiceOf(device.Service)
//	plugin.Implement(svc, device.Read, func(ctx context.Context, p device.ReadParams) (device.Reading, error) {
//		if p.Probe != "inlet" {
//			return device.Reading{}, plugin.Errorf(wire.CodeInvalid, "unknown probe %q", p.Probe)
//		}
//		return device.Reading{Celsius: 21.5}, nil
//	})
//	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
//
// Serve refuses an adapter whose contract has a method without a handler. Params are
// decoded with package codec, the rules the hosts' clients apply (exact numbers, the
// json tags' names); params a handler cannot take are answered invalid with one line
// naming the field. A service without a contract is declared with [NewService] and its
// methods registered by name with [Handle]; a handler that wants the raw JSON takes
// json.RawMessage. A json.RawMessage result is copied when the handler returns, so the
// handler may reuse its memory; [HandleLent] saves the copy of a large one for a handler
// that never changes those bytes again.
//
// The engine ([Adapter.Serve]) does everything the protocol asks of an adapter: the
// catalog is built and validated before anything is read; the initialize handshake is
// answered and its configuration decoded into [Adapter.Configuration]; every request
// runs in its own goroutine with a context that the host's cancel and the end of stdin
// cancel, at most 32 at once (a further one is answered busy); each request gets
// exactly one reply. A handler's error becomes an error reply: an [*Error] (see
// [Errorf]) keeps its code, a cancelled context becomes aborted, an expired one
// deadline, anything else (a panic too) failed. A host that breaks the protocol in a way
// no reply can answer ends the connection with a *wire.ViolationError.
//
// [Main] protects stdout: from its first instruction, anything the adapter or its
// libraries print to os.Stdout goes to stderr, and only frames reach the host. It also
// recognises a person running the adapter by hand (stdin is a terminal, or the input
// begins with text) and says that this is an adapter a host starts. [Logger] gives the
// adapter a logger whose records the host shows under the adapter's name.
package plugin
