// Package bound computes the effective value of each bound of a [limits.Limits]: the
// field when it is set and within the protocol's value, the protocol's value otherwise.
// A nil *Limits gives the protocol's values. The functions never modify the Limits, so
// one Limits may be shared freely. They live here, not as methods of limits.Limits,
// because only adapterkit's own packages read effective bounds; a host only sets fields.
//
// It is in the module's shared layer (internal/) and imports only limits; runtime,
// plugin, lifecycle, registry and controlplane read effective bounds through it.
package bound

import (
	"time"

	"github.com/adapterkit/adapterkit/limits"
)

func pick[T int | uint64 | time.Duration](v, max T) T {
	if v <= 0 || v > max {
		return max
	}
	return v
}

// Frame returns the effective frame payload cap.
func Frame(l *limits.Limits) int {
	if l == nil {
		return limits.MaxFrameSize
	}
	return pick(l.MaxFrameSize, limits.MaxFrameSize)
}

// InFlight returns the effective cap on requests in flight.
func InFlight(l *limits.Limits) int {
	if l == nil {
		return limits.MaxInFlight
	}
	return pick(l.MaxInFlight, limits.MaxInFlight)
}

// RequestID returns the effective largest request identity.
func RequestID(l *limits.Limits) uint64 {
	if l == nil {
		return limits.MaxRequestID
	}
	return pick(l.MaxRequestID, limits.MaxRequestID)
}

// Call returns the effective default call deadline.
func Call(l *limits.Limits) time.Duration {
	if l == nil {
		return limits.CallDeadline
	}
	return pick(l.CallDeadline, limits.CallDeadline)
}

// Console returns the effective console close and transfer abort bound.
func Console(l *limits.Limits) time.Duration {
	if l == nil {
		return limits.ConsoleClose
	}
	return pick(l.ConsoleClose, limits.ConsoleClose)
}

// PipeWrite returns the effective timeout for writing one frame.
func PipeWrite(l *limits.Limits) time.Duration {
	if l == nil {
		return limits.PipeWriteTimeout
	}
	return pick(l.PipeWriteTimeout, limits.PipeWriteTimeout)
}

// Grace returns the effective disconnect grace.
func Grace(l *limits.Limits) time.Duration {
	if l == nil {
		return limits.DisconnectGrace
	}
	return pick(l.DisconnectGrace, limits.DisconnectGrace)
}

// Cleanup returns the effective process cleanup bound.
func Cleanup(l *limits.Limits) time.Duration {
	if l == nil {
		return limits.ProcessCleanup
	}
	return pick(l.ProcessCleanup, limits.ProcessCleanup)
}
