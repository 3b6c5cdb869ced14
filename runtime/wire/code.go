package wire

import (
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/limits"
)

// Code is an error code of an error envelope (R28).
type Code string

// The eight error codes of the protocol.
const (
	CodeInvalid     Code = "invalid"
	CodeClosed      Code = "closed"
	CodeAborted     Code = "aborted"
	CodeDenied      Code = "denied"
	CodeUnavailable Code = "unavailable"
	CodeBusy        Code = "busy"
	CodeFailed      Code = "failed"
	CodeDeadline    Code = "deadline"
)

// Codes lists the protocol's error codes in the specification's order.
var Codes = [...]Code{CodeInvalid, CodeClosed, CodeAborted, CodeDenied, CodeUnavailable, CodeBusy, CodeFailed, CodeDeadline}

// Valid reports whether c is exactly one of the eight codes (lower case, A21).
func (c Code) Valid() bool {
	switch c {
	case CodeInvalid, CodeClosed, CodeAborted, CodeDenied, CodeUnavailable, CodeBusy, CodeFailed, CodeDeadline:
		return true
	}
	return false
}

// NormalizeCode maps a code as received to a protocol code: any string that is not
// exactly one of the eight becomes [CodeFailed] (R29, A21).
func NormalizeCode(s string) Code {
	if c := Code(s); c.Valid() {
		return c
	}
	return CodeFailed
}

// TruncateMessage caps an error message at [limits.MaxErrorMessage] bytes, cutting on a
// UTF-8 character boundary (R30, R31, A20).
func TruncateMessage(s string) string {
	if len(s) <= limits.MaxErrorMessage {
		return s
	}
	cut := limits.MaxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Messages the protocol text names, used by both sides.
const (
	// MessageUnknownMethod is the message of an unavailable reply for a method that is
	// not advertised (R41, R42, A22).
	MessageUnknownMethod = "Unknown method"
	// MessageRequestTooLarge is the message of the invalid refusal of a request whose
	// frame would exceed the frame limit (R58).
	MessageRequestTooLarge = "Request exceeds the adapter frame limit; use a paged or streamed service"
)
