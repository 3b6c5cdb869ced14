// Package plugin is the adapter SDK: it lets an adapter written in Go speak the Adapter
// process protocol v1 (docs/protocol.md in the repository) over its stdin and stdout.
//
// An adapter declares its services with [NewService] and [Handle], puts them in an
// [Adapter] and calls [Main] from func main:
//
//	svc := plugin.NewService("example.device", 1)
//	plugin.Handle(svc, "example.device.read", read)
//	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
//
// The engine ([Adapter.Serve]) does everything the protocol asks of an adapter:
//
//   - The catalog is built from the services and validated before anything is read, so
//     an adapter never starts half-working (R19-R25).
//   - The initialize handshake is answered with the catalog; its configuration is
//     decoded into [Adapter.Configuration]. Requests before it, and a second one, are
//     answered invalid (R27, A7).
//   - Every request runs in its own goroutine with a context that the host's cancel and
//     the end of stdin cancel (R37, R49). At most 32 requests run at once; a further one
//     is answered busy at once, and a cancelled handler keeps its slot until it returns
//     (R38, R40, A16).
//   - Each request gets exactly one reply (R16); the adapter never speaks unprompted
//     (R15). A request with an unknown method gets unavailable "Unknown method" (R42), a
//     request with unknown envelope fields is answered invalid and never executed (A4).
//   - A handler's error becomes an error reply: an [*Error] keeps its code, a cancelled
//     context becomes aborted, an expired one deadline, anything else failed; codes and
//     messages are normalised and capped (R28, R30). A panic becomes failed and the
//     adapter keeps running.
//   - Host faults that cannot be tied to a request id (bad framing, bad JSON, a wrong
//     envelope type, a non-increasing id) end the connection (A14, A28).
//   - Replies go through one writer that batches them under load; stdin is read
//     promptly while handlers run (R46).
//   - [Main] protects stdout: from its first instruction, anything the adapter or its
//     libraries print to os.Stdout goes to stderr, and only frames reach the host (R6).
//   - [Main] recognises a person running the adapter by hand (stdin is a terminal, or
//     the input begins with text) and says that this is an adapter a host starts, with
//     the adapterctl commands that try it.
//
// Error replies need nothing but this package: return plugin.Errorf(wire.CodeInvalid,
// "unknown probe %q", p) from a handler; the eight codes are [wire.CodeInvalid] ...
// [wire.CodeDeadline].
//
// Params are decoded with mapstructure using the json tags of the parameter type;
// unknown keys are refused with invalid. A handler that wants the raw JSON takes
// json.RawMessage (no decoding at all) or map[string]any.
package plugin
