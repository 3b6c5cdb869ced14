package registry

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/adapterkit/adapterkit/codec"
)

// encodeObject turns a configuration or params value into a JSON object. Raw JSON is
// passed on as it is (the connection validates it in one pass before sending); any
// other value is encoded with package codec and must come out as an object.
func encodeObject(v any) (json.RawMessage, error) { return appendObject(nil, v) }

// appendObject is encodeObject appending to dst (raw JSON is returned as it is).
func appendObject(dst []byte, v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	}
	b, err := codec.Append(dst, v)
	if err != nil {
		return nil, &encodeError{Err: err}
	}
	if len(b) == len(dst) || b[len(dst)] != '{' {
		return nil, &encodeError{Err: fmt.Errorf("%T encodes to %s", v, truncate(b))}
	}
	return b, nil
}

// isRaw reports whether appendObject passes v on as it is: raw JSON, the caller's own
// bytes.
func isRaw(v any) bool {
	switch v.(type) {
	case json.RawMessage, []byte:
		return true
	}
	return false
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// ErrEncode is matched (errors.Is) by the error of a configuration or params value that
// does not encode to a JSON object; the error says why.
var ErrEncode = errors.New("registry: value does not encode to a JSON object")

// encodeError is a configuration or params value that does not encode to a JSON object.
type encodeError struct{ Err error }

func (e *encodeError) Error() string { return ErrEncode.Error() + ": " + e.Err.Error() }

// Unwrap returns ErrEncode and the cause.
func (e *encodeError) Unwrap() []error { return []error{ErrEncode, e.Err} }
