// Package runtime is the host side of one connection to an adapter speaking the Adapter
// process protocol v1, over any reader/writer pair (the adapter's stdout and stdin). It
// knows nothing of processes: package lifecycle starts the adapter and hands its pipes
// to [NewConn].
//
// In the module's layers it sits above codec and contract (it imports limits, wire and
// the shared internal packages) and below lifecycle; it never depends on platform or
// plugin.
//
// A [Conn] has one reader of the adapter's output at a time, handed over explicitly: it
// decodes frames and routes each reply to its caller. Frames are thus read whole and in
// order, and a violation is seen once, while the reader need not be one goroutine: on an
// output with read deadlines (an *os.File pipe on Unix, as package lifecycle gives it)
// a caller that finds nobody reading reads its reply itself, handing other callers
// theirs, and passes the role on when it has its own, so that a lone call is not woken
// by another goroutine that read its reply first (on a machine with idle processors
// that wake-up costs a good part of a round trip). While calls from several callers
// overlap, and on other outputs always, the connection's own reader goroutine reads;
// once nothing is in flight it leaves the role free for a moment (for the next call)
// and then takes it again to watch the idle output for its end. A caller whose
// context ends while it reads returns at once: a passed read deadline stops its Read
// and the frame it was in is finished by the next reader. The connection also has one
// writer goroutine, which writes queued frames to the adapter's input in identity
// order, several at once under load, each within the pipe write timeout. Writes never
// interleave: a caller whose request finds nobody writing (on a Unix pipe) first makes
// one non-blocking write of the queue itself, sparing the hand-off, and leaves the
// writer whatever the pipe did
// not take, so no call ever waits for the pipe. The writer runs only while callers
// leave it something: it starts when one does and ends after a second with nothing to
// write, so an idle connection has none.
//
// # Calls
//
// [Conn.Initialize] performs the handshake; afterwards [Conn.Call] sends a
// request and waits for its reply. A call takes one of the in-flight slots
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
