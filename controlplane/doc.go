// Package controlplane is adapterkit's control plane: a daemon that keeps a set of
// adapters supervised and answers clients over a Unix domain socket (and, with mutual
// TLS, over TCP), and the client that talks to it. `adapterctl serve` is the daemon and
// `adapterctl` its command-line client.
//
// In the module's layers it sits above registry and below adapterctl; what only it uses
// is its own (controlplane/internal/dirwatch).
//
//	// daemon (signal handling belongs to the program, never to this package)
//	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
//	defer stop()
//	err := controlplane.Serve(ctx, controlplane.ServerConfig{Socket: sock, Dirs: dirs})
//
//	// client
//	c, err := controlplane.Dial(ctx, sock)
//	defer c.Close()
//	res, err := c.Send(ctx, controlplane.SendParams{Adapter: "thermometer",
//		Method: "example.device.read", Params: json.RawMessage(`{"probe":"inlet"}`)})
//
// Frames are a 4-byte big-endian length and a JSON envelope of at most 16 MiB, decoded
// by the adapter protocol's strict rules (one object of valid UTF-8, exact field names,
// none twice, none unknown, at every level of params); every request gets exactly one
// response, and Discover streams events before it. The
// methods are Ping, Version, Capabilities, Discover, Send and Status ([Client] has one
// method each; the types of this package are their params and results). A failed
// request is an [*Error] whose [Code] [CodeOf] reads; a failed Send carries what the
// adapter layer knew in its [CallDetails].
//
// A typed client of a service contract works through the daemon as it does embedded:
// [Client.Adapter] returns a daemon's adapter, a registry.Caller that registry.NewClient
// binds to (checking the catalog the daemon has) and registry.Call calls, with the errors
// of the embedded path (a *runtime.CallError and the typed errors in its chain).
//
// [Serve] sweeps what a crashed predecessor left running, creates the socket with
// owner-only permissions and answers only clients of its own user, read from the
// kernel (Linux and macOS; elsewhere Serve returns an error matching
// errors.ErrUnsupported, and the client works everywhere). With [ServerConfig].Remote
// it also listens on TCP with mutual TLS 1.3, mapping each client certificate's
// identity to a [Role] ([RemoteConfig]; clients use [DialTLS] and [ClientTLSConfig]).
// Adapters are found by discovery in the configured directories and opened lazily by
// the first request that needs them, under a restart policy. A slow client is dropped
// rather than stall the others. When ctx ends, Serve stops accepting, removes the
// socket, answers the requests under way with an error and closes every adapter; it
// returns nil only when every process tree was proven gone.
//
// A host that already holds the listening sockets (systemd's socket activation) passes
// them in [ServerConfig].Listener and [RemoteConfig].Listener; a [Monitor] in
// ServerConfig.Monitor reads the running daemon's figures in process (adapterctl
// serve exports them as Prometheus metrics).
//
// docs/control-plane.md in the repository is the reference of the wire protocol, for
// clients in any language, with the decisions taken where the specification is silent;
// docs/remote.md describes the TCP transport and its roles.
package controlplane
