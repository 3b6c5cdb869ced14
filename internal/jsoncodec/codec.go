package jsoncodec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// Unknown is codec.Unknown: what decoding does with an object member that names no
// field of the struct it is decoded into.
type Unknown bool

// Policies for unknown members.
const (
	// RefuseUnknown: a kindUnknown error. What an adapter applies to params: a host
	// setting a field the adapter does not know would otherwise be ignored silently.
	RefuseUnknown Unknown = false
	// IgnoreUnknown: the member is skipped (still checked to be JSON). What a host
	// applies to results, so that an adapter may add result fields within a service
	// version without breaking the hosts built before.
	IgnoreUnknown Unknown = true
)

// decodeAliasing decodes the JSON value data into *v as [DecodeValue] does, except that
// long strings without escapes alias data: they share its memory instead of being
// copied (a string of 64 KiB or more keeps data alive as long as it is referenced). The
// caller hands data over for good: it must never be modified afterwards (a frame read
// for this value alone), or the decoded strings change with it.
func decodeAliasing[T any](data []byte, v *T, unknown Unknown) error {
	if len(data) == 0 {
		return nil
	}
	rv := reflect.ValueOf(v).Elem()
	p := planFor(rv.Type())
	d := decoder{b: data, ignore: bool(unknown), alias: true}
	if err := d.top(p, rv); err != nil {
		return err
	}
	return nil
}

// DecodeValue is codec.DecodeValue: it decodes the JSON value data into target, a
// non-nil pointer; an empty data is taken as null, which leaves the target as it is.
// The error is an *Error.
func DecodeValue(data []byte, target any, unknown Unknown) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{kind: kindUnsupported, Detail: fmt.Sprintf("the target must be a non-nil pointer, not %T", target)}
	}
	return decode(data, rv.Elem(), unknown)
}

func decode(data []byte, v reflect.Value, unknown Unknown) error {
	if len(data) == 0 {
		return nil
	}
	p := planFor(v.Type())
	if err := decodeFast(data, p, v, unknown); err != nil {
		return err
	}
	return nil
}

// decodeFast is the direct decoder: one pass over the text, straight into v.
func decodeFast(data []byte, p *plan, v reflect.Value, unknown Unknown) *Error {
	d := decoder{b: data, ignore: bool(unknown)}
	return d.top(p, v)
}

// top decodes the whole text: one value and nothing after it.
func (d *decoder) top(p *plan, v reflect.Value) *Error {
	if err := d.value(p, v); err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return d.syntax("data after the JSON value")
	}
	return nil
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type encoder struct {
	w   appendWriter
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = json.NewEncoder(&e.w)
	e.enc.SetEscapeHTML(false)
	return e
}}

// Append is codec.Append: it appends v encoded as one JSON value to dst, as
// encoding/json encodes it except that <, > and & are not escaped. Plain data types are
// written straight into dst by a per-type encoder; others (types with their own
// MarshalJSON, for instance) go through encoding/json.
func Append(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, "null"...), nil
	}
	out, err := encoderFor(rv.Type()).fn(dst, rv)
	switch {
	case err == nil:
		return out, nil
	case err != errStd:
		return dst, fmt.Errorf("codec: %w", err)
	}
	return appendStd(dst, v)
}

// appendStd is Append with encoding/json alone.
func appendStd(dst []byte, v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	e.w.b = dst
	err := e.enc.Encode(v)
	out := e.w.b
	e.w.b = nil
	encoders.Put(e)
	if err != nil {
		return dst, fmt.Errorf("codec: %w", err)
	}
	if n := len(out); n > len(dst) && out[n-1] == '\n' {
		out = out[:n-1]
	}
	return out, nil
}

// numberOf returns a number literal as a json.Number.
func numberOf(lit []byte) json.Number { return json.Number(lit) }
