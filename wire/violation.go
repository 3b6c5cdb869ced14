package wire

import (
	"errors"
	"strconv"
)

// Violation is a kind of protocol violation by the peer. Each ends the connection. The
// first six are the adapter's, as the host sees them (the specification's table, in its
// order); the others are the host's, as an adapter sees them. A Violation is itself an error, so errors.Is(err, ProcessExited) finds the kind
// through any *ViolationError in err's chain; errors.Is(err, ErrHostViolation) holds for
// every kind of the host's.
type Violation uint8

// The violations.
const (
	ProcessExited   Violation = iota + 1 // The adapter process exited
	Output                               // The adapter output ended or violated the protocol
	InvalidResponse                      // The adapter sent an invalid response
	UnknownReply                         // The adapter replied to an unknown request
	InputPipe                            // The adapter input pipe failed or stalled
	IDExhausted                          // Adapter request identity space exhausted

	HostFrame      // The host sent a malformed frame
	HostEnvelope   // The host sent an envelope not tied to a request id
	HostIDNotAbove // The host sent a request id not above every earlier one
)

var violationText = [...]string{
	ProcessExited:   "The adapter process exited",
	Output:          "The adapter output ended or violated the protocol",
	InvalidResponse: "The adapter sent an invalid response",
	UnknownReply:    "The adapter replied to an unknown request",
	InputPipe:       "The adapter input pipe failed or stalled",
	IDExhausted:     "Adapter request identity space exhausted",
	HostFrame:       "The host sent a malformed frame",
	HostEnvelope:    "The host sent an envelope not tied to a request id",
	HostIDNotAbove:  "The host sent a request id not above every earlier one",
}

// String returns the kind's text (for the adapter's kinds, the specification's exact
// text).
func (v Violation) String() string {
	if v >= ProcessExited && int(v) < len(violationText) {
		return violationText[v]
	}
	return "Unknown protocol violation " + strconv.Itoa(int(v))
}

// Error returns the same text as String.
func (v Violation) Error() string { return v.String() }

// byHost reports whether the host committed the violation (seen by an adapter).
func (v Violation) byHost() bool { return v >= HostFrame && v <= HostIDNotAbove }

// Is makes errors.Is(v, ErrHostViolation) true for the host's kinds.
func (v Violation) Is(target error) bool { return target == ErrHostViolation && v.byHost() }

// ErrHostViolation is matched (errors.Is) by every *ViolationError of a host's kind;
// package plugin re-exports it as wire.ErrHostViolation.
var ErrHostViolation = errors.New("the host violated the protocol")

// ViolationError is a protocol violation as the cause of a connection's end: its kind,
// the request id concerned when known, and the detail (a *FrameError, an
// *EnvelopeError, io.EOF, a write error, a process's exit status ...). It is the one
// violation type of the module: package runtime (the adapter's violations) and package
// plugin (the host's) re-export it.
type ViolationError struct {
	Kind Violation
	ID   uint64 // the request id concerned, when known; else 0
	Err  error  // detail; may be nil
}

// Error returns the kind's text, the id when known, and the detail.
func (e *ViolationError) Error() string {
	s := e.Kind.String()
	if e.ID != 0 {
		s += " (id " + strconv.FormatUint(e.ID, 10) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind (a sentinel) and the detail.
func (e *ViolationError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
