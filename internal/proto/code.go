package proto

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// Codes lists the protocol's error codes in the specification's order.
var Codes = [...]wire.Code{wire.CodeInvalid, wire.CodeClosed, wire.CodeAborted, wire.CodeDenied, wire.CodeUnavailable, wire.CodeBusy, wire.CodeFailed, wire.CodeDeadline}

// ValidCode reports whether c is exactly one of the eight codes (lower case, A21).
func ValidCode(c wire.Code) bool {
	switch c {
	case wire.CodeInvalid, wire.CodeClosed, wire.CodeAborted, wire.CodeDenied, wire.CodeUnavailable, wire.CodeBusy, wire.CodeFailed, wire.CodeDeadline:
		return true
	}
	return false
}

// NormalizeCode maps a code as received to a protocol code: any string that is not
// exactly one of the eight becomes [CodeFailed] (R29, A21).
func NormalizeCode(s string) wire.Code {
	if c := wire.Code(s); ValidCode(c) {
		return c
	}
	return wire.CodeFailed
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
)

// RequestTooLargeMessage is the message of the invalid refusal of a request whose frame
// would exceed the frame limit (R58), naming the request's size and the limit: what is
// measured ("params" when they alone exceed it, "a frame" for the whole request), its
// size and the limit in bytes; and the helper that sends bytes in chunks.
func RequestTooLargeMessage(what string, size, limit int) string {
	return "Request exceeds the adapter frame limit: " + what + " of " + strconv.Itoa(size) +
		" bytes, the limit is " + strconv.Itoa(limit) + " bytes; use a paged or streamed service " +
		"(registry.Upload sends an io.Reader in chunks, see contract.NewUpload)"
}

// LogLevelEnv names the environment variable through which a host sets the level of
// an adapter's own logger (trace, debug, info, warn, error or off; default info): the
// Go SDK's plugin.Logger and the other languages' SDKs read it, registry sets it.
const LogLevelEnv = "ADAPTERKIT_LOG_LEVEL"

// WithLogLevel returns env with $ADAPTERKIT_LOG_LEVEL set to level (an hclog level
// name), replacing an earlier value; env itself is not modified.
func WithLogLevel(env []string, level string) []string {
	prefix := LogLevelEnv + "="
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, prefix) })
	return append(out, prefix+level)
}
