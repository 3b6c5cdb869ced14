package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/adapterkit/adapterkit/codec"
)

// envKind is the kind of an envelope.
type envKind string

// The three kinds of envelope.
const (
	kindRequest  envKind = "request"  // client to daemon
	kindResponse envKind = "response" // daemon to client: the one final answer to a request
	kindEvent    envKind = "event"    // daemon to client: one item of a streamed answer
)

// Methods of the control-plane protocol v1.
const (
	methodPing         = "Ping"
	methodVersion      = "Version"
	methodCapabilities = "Capabilities"
	methodDiscover     = "Discover"
	methodSend         = "Send"
	methodStatus       = "Status"
	// methodUpgrade looks for new versions of the adapters open and lets them take
	// over (an addition to the specification's list of methods).
	methodUpgrade = "Upgrade"
)

// envelope is one control-plane message: the JSON body of one frame.
type envelope struct {
	// ID is the correlation id: a UUID v4 chosen by the client, echoed in the
	// response and in every event of a streamed answer.
	ID   string  `json:"id"`
	Kind envKind `json:"kind"`
	// Method names the method of a request, and is repeated in its events.
	Method string `json:"method,omitempty"`
	// Params are the request's (or the event's) parameters, a JSON object.
	Params json.RawMessage `json:"params,omitempty"`
	// Result is a successful response's value, a JSON object.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is a failed response's error.
	Error *Error `json:"error,omitempty"`
}

// Code is a control-plane error code. Codes are stable: new ones may be added, none
// is ever repurposed.
type Code string

// The error codes of the control plane (docs/control-plane.md#error-codes).
const (
	// CodeNotImplemented: the method is known, but nothing can serve it; for Send,
	// the adapter does not advertise the method.
	CodeNotImplemented Code = "not_implemented"
	// CodeUnknownMethod: the method is not in the schema.
	CodeUnknownMethod Code = "unknown_method"
	// CodeInvalidParams: a schema mismatch: an envelope or params with an unknown,
	// missing or mistyped field, bad JSON, an invalid id; for Send, also an adapter
	// answering invalid.
	CodeInvalidParams Code = "invalid_params"
	// CodeTransportError: the adapter failed: it could not be started, its call
	// failed (the adapter protocol's code is in the details), or it broke the protocol.
	CodeTransportError Code = "transport_error"
	// CodeNotFound: the adapter named is not known to the daemon.
	CodeNotFound Code = "not_found"
	// CodeFrameTooLarge: a frame exceeded the 16 MiB cap.
	CodeFrameTooLarge Code = "frame_too_large"
	// CodeInternal: an unexpected daemon error (including a daemon shutting down).
	CodeInternal Code = "internal"
	// CodePermissionDenied: the client's role does not allow the method (a remote
	// client with role read calling Send); the connection stays usable. Added after
	// the specification's list; the Unix-socket owner never gets it.
	CodePermissionDenied Code = "permission_denied"
)

// Error is the error object of a failed response. A *Error is also the Go error
// the [Client] returns for it; [CodeOf] reads its code through any wrapping.
type Error struct {
	Code    Code            `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "controlplane: " + string(e.Code)
	}
	return "controlplane: " + string(e.Code) + ": " + e.Message
}

// CallDetails decodes the details of a Send error: ok is false when the error
// carries none.
func (e *Error) CallDetails() (d CallDetails, ok bool) {
	if len(e.Details) == 0 {
		return d, false
	}
	if err := codec.DecodeValue(e.Details, &d, codec.IgnoreUnknown); err != nil {
		return CallDetails{}, false
	}
	return d, true
}

// CodeOf returns the code of the first *Error in err's chain, and "" when there is none
// (err is nil, or the request failed on the client's side: a dial, a write, a broken
// connection).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newError(code Code, details any, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if details != nil {
		if b, err := json.Marshal(details); err == nil {
			e.Details = b
		}
	}
	return e
}

// newID returns a random UUID v4 (RFC 9562) in its canonical lower-case form.
func newID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (it panics if it cannot)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// validID reports whether id is a UUID v4 in the 8-4-4-4-12 hexadecimal form
// (either letter case): version nibble 4, variant bits 10.
func validID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	if id[14] != '4' {
		return false
	}
	switch id[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ErrProtocol is the cause of a connection a [Client] ended because the daemon
// broke the protocol (a body that is not an envelope, a frame over the cap).
var ErrProtocol = errors.New("controlplane: daemon broke the protocol")
