// Command console is an example adapter that runs a command and exposes its output as a
// polled stream: the protocol has no events (R15), so the host fetches the output with
// waiting reads (A34), following the convention of registry.Stream.
//
// Service example.console version 1:
//
//   - example.console.start {"command": ABSOLUTE_PATH, "args": [STRING...]} starts the
//     command and returns {"session": N}. The command is executed directly, never through
//     a shell, with the adapter's environment and working directory and no standard
//     input; a relative path is refused with invalid (and on Windows anything but an
//     explicit .exe, as for adapters, R62). Its standard output and standard error go
//     into one bounded buffer (1 MiB); while the buffer is full the command's writes
//     wait, so nothing is lost and memory stays bounded. At most 64 sessions exist at
//     once; a further start is answered busy.
//   - example.console.read {"session": N, "max_bytes": M, "wait_ms": W} waits up to W
//     milliseconds (0 to 15000, well below the call deadline) for output, returning as
//     soon as there is some, and answers {"data": BASE64, "eof": BOOL} with at most M
//     bytes (1 to 1 MiB). eof is true once the output has ended (the command and every
//     process that inherited its output closed it) and everything was read. A cancel
//     ends the wait with aborted "Read canceled".
//   - example.console.close {"session": N} kills the command (its process group on Unix)
//     if it still runs, waits for it within the console close bound (3 s, R44) and frees
//     the session; a command that did not end in time is answered failed.
//
// An unknown session is answered invalid. The commands are the adapter's children, so
// the host's supervision of the adapter's process tree covers them; the adapter also
// kills every command itself when the host disconnects (stdin ends, R49), before it
// exits.
//
// The service is declared once, in examples/console/consoleapi, which its hosts import
// too.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
)

// newAdapter returns the console adapter serving c.
func newAdapter(c *console) *plugin.Adapter {
	svc := plugin.ServiceOf(consoleapi.Service)
	plugin.Implement(svc, consoleapi.Start, c.start)
	plugin.Implement(svc, consoleapi.Read, c.read)
	plugin.Implement(svc, consoleapi.Close, c.close)
	return &plugin.Adapter{
		Services: []*plugin.Service{svc},
		Logger:   plugin.Logger(),
	}
}

// main serves like plugin.Main, and once the host has disconnected kills every command
// still running before the process exits: plugin.Main would exit without a word to the
// sessions.
func main() {
	c := newConsole(nil)
	// Serve protects stdout first (R6): frames go to a private copy of it, and os.Stdout
	// and descriptor 1 are redirected to stderr.
	err := newAdapter(c).Serve(context.Background(), os.Stdin, os.Stdout)
	ctx, cancel := context.WithTimeout(context.Background(), limits.ConsoleClose)
	cerr := c.closeAll(ctx)
	cancel()
	if err := errors.Join(err, cerr); err != nil {
		fmt.Fprintln(os.Stderr, "console:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
