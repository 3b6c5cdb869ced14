// Package controlplane is adapterkit's control plane: a daemon that keeps a set of
// adapters supervised and answers clients over a Unix domain socket (and, with
// mutual TLS, over TCP), and the client
// that talks to it (control-plane-framing-v1.txt; its "ubtd" is `adapterctl serve`,
// its "ubtctl" is `adapterctl`).
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
// A host that already holds the listening sockets (systemd's socket activation) passes
// them in ServerConfig.Listener and RemoteConfig.Listener; a [Monitor] in
// ServerConfig.Monitor reads the running daemon's figures in process (adapterctl
// exports them as Prometheus metrics with package registry/promcollector).
//
// # Wire protocol
//
// Each frame is a 4-byte big-endian body length, then a UTF-8 JSON body of at most
// 16 MiB (limits.ControlMaxFrameSize). A body is one envelope {id, kind, method,
// params, result, error}; ids are UUID v4 chosen by the client ([NewID]); kind is
// request (client to daemon), response or event (daemon to client). A streamed
// answer (Discover) is a sequence of event frames carrying the request's id and
// method, ended by a final response with an empty result {} or by an error
// response. Every request gets exactly one response. Error codes are the [Code]
// constants ([CodeOf] reads one from an error); they are stable, and new ones may be
// added, never repurposed.
//
// Methods: Ping, Version, Capabilities, Discover, Send, Status (see [Client] for
// each, and the types in types.go for params and results). Params are a JSON
// object (absent or null means {}); an unknown field (names match exactly, case
// included), a field given twice, a missing required field or a mistyped one is
// invalid_params.
//
// # Decisions where the specification is silent
//
//   - Oversized frame: a length prefix above 16 MiB is answered with a response
//     whose id is "" and whose error is frame_too_large, and the connection is then
//     closed: its body is never read, so the stream cannot be followed further.
//   - Bad body: the length prefix delimited it, so the stream stays in step; a body
//     that is not one JSON object (a zero-length body included: the specification
//     does not forbid the frame, and an empty body is simply not an envelope), an
//     envelope with an unknown or mistyped field, a kind other than request, no
//     method, or an id that is not a UUID v4 is answered with invalid_params and the
//     connection continues. The answer echoes the id as received when it is a JSON
//     string of at most 128 bytes (so a client can correlate even a malformed id),
//     else "". An id already used by a request under way on the same connection is
//     invalid_params too.
//   - A client sends nothing but requests; a request carrying result or error is
//     invalid_params. There is no cancel in v1: a client abandons a request by
//     ignoring its answers; closing the connection (even only its writing side)
//     cancels everything it started.
//
// # The daemon
//
// [Serve] first runs platform.Sweep, removing what a crashed predecessor left
// running (reported by Status), then creates the socket with owner-only
// permissions (bound inside a fresh 0700 directory, made 0600, hard-linked into
// place, so no other user can ever connect and a live daemon's socket is never
// replaced; the process umask is not touched).
// Each accepted connection's peer user is read from the kernel (SO_PEERCRED on
// Linux, LOCAL_PEERCRED on macOS) and a client of another user is closed without a
// word. Other operating systems are not supported: on Windows AF_UNIX exists but
// gives no peer credentials, so Serve returns [ErrUnsupported] there (the Client
// works everywhere).
//
// # Remote clients (TCP with mutual TLS)
//
// With ServerConfig.Remote the daemon also listens on TCP ([RemoteConfig]), and
// only with mutual TLS: TLS 1.3, a client certificate chaining to the configured
// client CA, and an identity (subject common name, or an SPKI pin "spki:sha256/..."
// of its public key, see [SPKIPin]) that RemoteConfig.Allow maps to a [Role]:
// read (Ping, Version, Capabilities, Discover, Status) or call (also Send). A
// client that is not verified or not named is refused during the handshake,
// counted in Status and logged with its address and identity; a method its role
// does not allow is answered permission_denied and the connection stays usable.
// Above the transport everything is the Unix socket's code: frames, envelopes,
// methods, codes, bounds. The socket's clients (the daemon's own user) keep every
// permission. A handshake is bounded (RemoteConfig.HandshakeTimeout), an idle
// connection is closed (IdleTimeout), MaxClients counts both transports, and the
// certificate files are read again whenever RemoteConfig.Reload delivers (adapterctl
// serve does it on SIGHUP) without disturbing connected clients. Clients connect
// with [DialTLS] and [ClientTLSConfig]. A remote client with role call can make the
// adapters act with the daemon's user's permissions: Allow grants that.
//
// Adapters are found by discovery in the configured directories and opened lazily,
// by the first Send (or Capabilities) that needs one, through a registry with a
// restart policy ([DefaultRestart]); an adapter that used up its restarts is closed
// and opened afresh by the next Send. Send names an adapter as NAME,
// NAME@CONSTRAINT or the absolute path of a discovered adapter; a path outside the
// directories is not_found (the daemon's set of adapters is what it discovered).
// Errors of the call are mapped to control-plane codes, the adapter protocol's code
// and outcome kept in the details ([CallDetails]): a method the adapter does not
// advertise is not_implemented, an adapter's invalid is invalid_params, an unknown
// adapter not_found, every other adapter failure (start, call, violation)
// transport_error, a daemon shutting down internal.
//
// Each connection has one reader, a handler goroutine per request (at most 64 under
// way per connection; further requests wait to be read) and one writer with a
// bounded queue: a client that leaves its answers unread for ServerConfig.
// WriteTimeout is dropped, so a slow client never stalls the others, the handlers or
// the adapters. A client that disconnects ends its requests (a Send in flight is
// cancelled at the adapter, a Discover stops) and costs nothing further.
//
// When ctx ends, Serve stops accepting, removes the socket, answers the requests
// under way with an error, and closes every adapter verified (disconnect grace, then
// kill and proof of the whole process tree). It returns nil only when every tree
// was proven gone.
package controlplane
