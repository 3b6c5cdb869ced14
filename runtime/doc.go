// Package runtime is the host side of one connection to an adapter speaking the Adapter
// process protocol v1, over any reader/writer pair (the adapter's stdout and stdin). It
// knows nothing of processes: package lifecycle starts the adapter and hands its pipes
// to [NewConn].
//
// In the module's layers it sits above codec and contract (it imports limits, wire and
// the shared internal packages) and below lifecycle; it never depends on platform or
// plugin.
//
// A [Conn] has one reader of the adapter's output at a time, handed over explicitly, so
// frames are read whole and in order and a violation is seen once. On an output with
// read deadlines (a Unix pipe) a lone caller reads its own reply, sparing a goroutine
// wake-up; while calls overlap, and on other outputs, the connection's reader goroutine
// reads, and it watches the idle output for its end. Frames go to the adapter's input
// in identity order through one write queue: a caller that finds nobody writing makes
// one non-blocking write itself and leaves the rest to a writer goroutine that runs
// only while there is something to write.
//
// # Calls
//
// [Conn.Initialize] performs the handshake; afterwards [Conn.Call] sends a
// request and waits for its reply ([Conn.Do] is the same call as the module's typed
// client makes it, with its params' buffer and what it learns of the result). A call takes one of the in-flight slots
// ([limits.MaxInFlight]) before it is sent and releases it only when the adapter replies,
// also when the caller has given up meanwhile; initialize takes a slot too,
// which changes nothing since it is alone on the wire. A caller that finds no free slot
// waits within its deadline, or fails at once with busy ([Options.FailFast]).
//
// A call's deadline is its context's, or [limits.Limits.Call] from the moment of the
// call. When the context ends after the request was sent, the host queues a cancel
// and the caller returns at once with aborted (cancellation) or deadline, marked
// uncertain; the identity stays pending until the adapter replies, and that reply is
// then dropped.
//
// Every failure is a [*CallError] saying what is known: the code, whether the operation
// never started (nothing was sent) and whether its outcome is uncertain: [CodeOf],
// [IsNeverStarted] and [IsUncertain] read them, and errors.Is works on the cause.
//
// # Shutdown
//
// A connection ends once, with the first cause: the host's [Conn.Close] ([ErrClosed])
// or [Conn.Abort], a protocol violation (a *wire.ViolationError), or a failed
// initialize. The order is fixed:
//
//  1. under the lock, the cause is recorded and no new request can be queued;
//  2. still under the lock, every pending call fails exactly once, with closed and the
//     cause: uncertain once its request was handed to the writer, never started
//     while it was still queued;
//  3. Done is closed, waking callers waiting for a slot and the writer;
//  4. the adapter's input is closed (the adapter sees end of input; a stalled write
//     returns);
//  5. the adapter's output is closed, if it is an io.Closer (a Read in progress, the
//     reader goroutine's or a caller's, returns);
//  6. Close and Abort then wait for the connection's goroutines to end.
//
// A violation ends only its own connection.
package runtime
