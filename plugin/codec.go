package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/go-viper/mapstructure/v2"

	"github.com/adapterkit/adapterkit/runtime/wire"
)

// paramsDecoder returns the function that decodes a request's params (a JSON object,
// already validated by the envelope decoder) into a *P.
func paramsDecoder[P any]() func(params []byte, p *P) error {
	var zero P
	switch any(&zero).(type) {
	case *json.RawMessage:
		// The params are a sub-slice of a frame nobody else uses: no copy, no pass.
		return func(params []byte, p *P) error {
			*any(p).(*json.RawMessage) = params
			return nil
		}
	case *map[string]any:
		return func(params []byte, p *P) error {
			if err := json.Unmarshal(params, p); err != nil {
				return &Error{Code: wire.CodeInvalid, Message: "invalid params: " + err.Error()}
			}
			return nil
		}
	}
	return func(params []byte, p *P) error {
		if err := decodeObject(params, p); err != nil {
			return &Error{Code: wire.CodeInvalid, Message: "invalid params: " + err.Error()}
		}
		return nil
	}
}

// decodeObject decodes a JSON object into target (a pointer) with mapstructure: json
// tags, exact key matching, unknown keys refused, numbers kept exact (an integer field
// refuses 1.5, a string field refuses a number).
func decodeObject(object []byte, target any) error {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(object))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("not a JSON object")
	}
	md, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook:  numberHook,
		ErrorUnused: true,
		Squash:      true,
		TagName:     "json",
		MatchName:   func(key, field string) bool { return key == field },
		Result:      target,
	})
	if err != nil {
		return err
	}
	return md.Decode(m)
}

var jsonNumberType = reflect.TypeFor[json.Number]()

// numberHook keeps JSON numbers honest: an `any` target gets a float64, as with
// encoding/json, and a string target refuses a number instead of taking its digits.
// Integer and float targets take json.Number themselves (an integer refuses 1.5).
func numberHook(from, to reflect.Type, data any) (any, error) {
	if from != jsonNumberType {
		return data, nil
	}
	n := data.(json.Number)
	switch to.Kind() {
	case reflect.Interface:
		f, err := n.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	case reflect.String:
		if to != jsonNumberType {
			return nil, fmt.Errorf("expected a string, got the number %s", n)
		}
	}
	return data, nil
}

// appendWriter is an io.Writer that appends to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// resultEncoder is a reusable json.Encoder writing into a caller's buffer.
type resultEncoder struct {
	w   appendWriter
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := new(resultEncoder)
	e.enc = json.NewEncoder(&e.w)
	e.enc.SetEscapeHTML(false)
	return e
}}

// validRaw checks a json.RawMessage result: empty (sent as null) or one JSON value.
func validRaw(raw json.RawMessage) error {
	if err := wire.ValidateValue(raw); err != nil {
		return fmt.Errorf("plugin: handler result is not one JSON value: %w", err)
	}
	return nil
}

// appendResult appends r encoded as one JSON value to dst (json.RawMessage results are
// handled by the caller).
func appendResult[R any](dst []byte, r R) ([]byte, error) {
	e := encoders.Get().(*resultEncoder)
	e.w.b = dst
	err := e.enc.Encode(r)
	out := e.w.b
	e.w.b = nil
	encoders.Put(e)
	if err != nil {
		return dst, fmt.Errorf("plugin: encoding the result: %w", err)
	}
	if n := len(out); n > len(dst) && out[n-1] == '\n' {
		out = out[:n-1]
	}
	return out, nil
}
