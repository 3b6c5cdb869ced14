// Package limits names every number of the Adapter process protocol v1 once.
//
// It is the lowest of the module's layers (internal/layers states them, lowest first):
// it imports no package of the module, and any may import it.
//
// The constants are the protocol's own bounds (docs/protocol.md, with its numbered
// rules). No other package of adapterkit writes these numbers; they
// read them from here, either directly or through a [Limits] value, which lets a host (and
// tests) choose smaller bounds than the protocol allows but never larger ones.
package limits

import "time"

// Protocol constants. Each is the value the specification states.
const (
	// ProtocolVersion is the protocol version spoken, sent in initialize and carried as
	// "v" in every envelope.
	ProtocolVersion = 1

	// MaxFrameSize is the largest payload of one frame in bytes, the 4-byte length
	// prefix excluded: 4 MiB. A longer length prefix ends the connection.
	MaxFrameSize = 4 << 20

	// FrameHeaderSize is the size of the big-endian length prefix of a frame.
	FrameHeaderSize = 4

	// MaxInFlight is the number of requests that may be in flight on one connection
	// at once; the adapter answers a further one with busy.
	MaxInFlight = 32

	// MaxRequestID is the largest request identity, 2^53-1.
	MaxRequestID = 1<<53 - 1

	// MaxErrorMessage is the cap, in bytes of UTF-8, on an error envelope's message.
	MaxErrorMessage = 4096

	// CallDeadline is the standard deadline of a call, initialize included.
	CallDeadline = 30 * time.Second

	// ConsoleClose bounds closing a console and aborting a transfer.
	ConsoleClose = 3 * time.Second

	// PipeWriteTimeout bounds writing one whole frame to the adapter's stdin; a write
	// that takes longer ends the connection.
	PipeWriteTimeout = 10 * time.Second

	// DisconnectGrace is how long the host lets an adapter exit on its own after
	// closing its stdin.
	DisconnectGrace = 5 * time.Second

	// ProcessCleanup bounds forcing an adapter's process tree down and confirming
	// that it ended.
	ProcessCleanup = 2 * time.Second

	// ControlMaxFrameSize is the largest body of one control-plane frame, 16 MiB
	// (docs/control-plane.md#frames); larger frames are refused with frame_too_large.
	ControlMaxFrameSize = 16 << 20
)

// Limits holds bounds a host or a test may lower. The zero value, and a nil *Limits,
// mean the protocol's own values. A field set to zero or a negative value takes the
// protocol's value; a field set above the protocol's value is clamped to it, so a Limits
// can only make adapterkit stricter, never let it break the protocol. adapterkit only
// reads a Limits, so one Limits may be shared freely.
type Limits struct {
	// MaxFrameSize caps a frame's payload in bytes (at most [MaxFrameSize]).
	MaxFrameSize int
	// MaxInFlight caps the requests in flight on one connection (at most [MaxInFlight]).
	MaxInFlight int
	// MaxRequestID is the largest request identity used (at most [MaxRequestID]).
	MaxRequestID uint64
	// CallDeadline is the default deadline of a call (at most [CallDeadline]).
	CallDeadline time.Duration
	// ConsoleClose bounds console close and transfer abort (at most [ConsoleClose]).
	ConsoleClose time.Duration
	// PipeWriteTimeout bounds writing one frame (at most [PipeWriteTimeout]).
	PipeWriteTimeout time.Duration
	// DisconnectGrace is the voluntary-exit window after stdin is closed (at most [DisconnectGrace]).
	DisconnectGrace time.Duration
	// ProcessCleanup bounds killing and verifying the process tree (at most [ProcessCleanup]).
	ProcessCleanup time.Duration
}
