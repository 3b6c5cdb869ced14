// Package consoleapi is the contract of service example.console version 1, the service
// of the console example adapter (examples/console): declared once, imported by the
// adapter, which implements it, and by its hosts (examples/host), which call it. The
// adapter's documentation says what each method does.
//
// Read follows the polled-stream convention of registry.Stream: a host reads a
// session's output with
//
//	st := registry.NewStream(ctx, c, consoleapi.Read, func(n int, wait time.Duration) consoleapi.ReadParams {
//		return consoleapi.ReadParams{Session: started.Session, MaxBytes: n, WaitMS: wait.Milliseconds()}
//	})
//
// and frees the session with Close once it has read what it wants.
package consoleapi

import "github.com/adapterkit/adapterkit/contract"

// StartParams are the params of example.console.start.
type StartParams struct {
	// Command is the absolute path of the command to run; it is never resolved or run
	// through a shell.
	Command string `json:"command"`
	// Args are the command's arguments.
	Args []string `json:"args"`
}

// SessionResult is the result of example.console.start.
type SessionResult struct {
	// Session identifies the session in the other methods' params.
	Session int64 `json:"session"`
}

// ReadParams are the params of example.console.read, the stream convention's waiting
// read (registry.NewStream).
type ReadParams struct {
	// Session is the session to read.
	Session int64 `json:"session"`
	// MaxBytes is the most bytes the read returns (1 to 1 MiB).
	MaxBytes int `json:"max_bytes"`
	// WaitMS is how long the read waits for output, in milliseconds.
	WaitMS int64 `json:"wait_ms"`
}

// ReadResult is the result of example.console.read: a chunk of the session's output.
type ReadResult struct {
	// Data is the output read, base64.
	Data string `json:"data"`
	// EOF says the output has ended and everything was read.
	EOF bool `json:"eof"`
}

// SessionParams are the params of example.console.close.
type SessionParams struct {
	// Session is the session to close.
	Session int64 `json:"session"`
}

// CloseResult is the result of example.console.close.
type CloseResult struct {
	// Session is the session closed.
	Session int64 `json:"session"`
	// ExitCode is the command's exit code; -1 when a signal ended it (as when close
	// killed it).
	ExitCode int `json:"exit_code"`
}

var (
	// Service is example.console version 1.
	Service = contract.NewService("example.console", 1)
	// Start starts a command and returns its session.
	Start = contract.NewMethod[StartParams, SessionResult](Service, "start")
	// Read waits up to params.WaitMS for output of a session and returns at most
	// params.MaxBytes of it.
	Read = contract.NewMethod[ReadParams, ReadResult](Service, "read")
	// Close kills a session's command if it still runs, waits for it within the console
	// close bound and frees the session.
	Close = contract.NewMethod[SessionParams, CloseResult](Service, "close")
)
