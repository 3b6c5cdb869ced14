// Package lifecycle takes one adapter from spawn to verified end.
//
// In the module's layers it sits above runtime and platform, which it joins, and below
// discovery and registry, which it never imports.
//
// [Open] starts the adapter's executable as a supervised process tree (package
// platform), connects a [runtime.Conn] to its stdin and stdout and performs the
// initialize handshake within the call deadline. While the adapter is open, a
// supervisor goroutine watches both the process and the connection: the adapter
// exiting ends the connection with "The adapter process exited" (the exit status is
// kept, see [ExitError]) and a protocol violation ends the process tree; either way
// every pending call fails as closed with an uncertain outcome and [Config.OnExit]
// tells the host.
//
// [Adapter.Close] disconnects in the order the protocol decides: close stdin,
// let the adapter exit on its own for up to the disconnect grace (5 s), force the
// whole tree down, and confirm within the process cleanup bound (2 s) that nothing of
// it remains. A closed stdout alone is not an exit, and an adapter that exits while a
// grandchild still holds its pipes does not hang the host.
//
// When cleanup cannot be verified, the adapter's package directory stays reserved in
// [Reservations] until a later [Reservations.Reverify] proves the tree gone.
//
// [Supervise] adds an optional restart policy with exponential backoff on top; its
// restart loop starts when the adapter first ends.
//
// An open adapter that is idle costs the host about 20-25 KiB (heap and stacks, as
// measured by the registry package's BenchmarkRegistryIdleMemory): four goroutines
// (the supervisor, the connection's reader, the standard error copy and the
// platform's reaper, which on Linux waits on a pidfd rather than holding a thread)
// and small buffers; larger read buffers, the connection's writer and the restart
// loop exist only while they are used.
//
// What a host sees of an adapter: with [Config.StderrLogger] its standard error is
// logged line by line under the adapter's name (hclog JSON records at their own
// level, other lines at [Config.StderrLevel], bounded and sanitized: lines of at most 64 KiB, 10000 a second);
// [Adapter.Stats] and [Supervisor.Stats] report its calls by method, exits, restarts and
// the resource use of its process tree; [Config.Observer] hands the same events to the
// host's own metrics system as they happen. See docs/observability.md.
package lifecycle
