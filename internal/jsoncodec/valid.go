package jsoncodec

import (
	"reflect"
	"sync"
)

// DecodeOwned decodes data, one JSON value, into target (a non-nil pointer) as
// [DecodeValue] does, for a text the module's envelope decoder has already validated
// whole as JSON of valid UTF-8 (a frame's params or result value): its strings are not
// scanned for UTF-8, control characters and escapes a second time. known (may be nil)
// says where the envelope decoder found data's long strings, whose ends are not looked
// for again, and receives the shared strings known to be verbatim (see
// Known.Verbatim). The error is an *Error.
//
// Hazards, which is why only the module's own layers can call it (package codec does
// not export it):
//   - data must have been validated: handed a text nobody checked, it stores whatever
//     bytes lie between quotes, invalid UTF-8 and control characters included; and
//     known.Long must be what the envelope decoder found in exactly this data (a
//     string is taken to end where it says).
//   - data is handed over for good: long strings without escapes alias it (share its
//     memory instead of being copied) and keep it alive as long as they are referenced,
//     so data must never be modified afterwards (a frame read for this value alone), or
//     the decoded strings change with it.
func DecodeOwned(data []byte, known *Known, target any, unknown Unknown) error {
	if len(data) == 0 {
		return nil
	}
	rv := reflect.ValueOf(target).Elem()
	p := planFor(rv.Type())
	d := decoder{b: data, ignore: bool(unknown), alias: true, valid: true, known: known}
	if known != nil {
		d.long = known.Long
	}
	if err := d.top(p, rv); err != nil {
		return err
	}
	return nil
}

var validCache sync.Map // reflect.Type -> bool

// WritesValid reports whether Append's output for a value of type t (when Append
// succeeds) is always one JSON value of valid UTF-8, so that a connection need not
// check params it wrote (handover.Request.Valid): true unless the type holds, at any
// depth, a type with its own MarshalJSON (whose bytes are written as they are, checked
// for syntax by encoding/json's Compact but not for UTF-8; json.RawMessage is one) or an
// interface (which may hold one). Every other byte comes from the codec's own writers or
// encoding/json's, which escape strings and replace invalid UTF-8. A recursive type is
// judged by its parts.
func WritesValid(t reflect.Type) bool {
	if v, ok := validCache.Load(t); ok {
		return v.(bool)
	}
	v := writesValidIn(t, map[reflect.Type]bool{})
	validCache.Store(t, v)
	return v
}

func writesValidIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true // decided by the parts of the type met first
	}
	seen[t] = true
	if t.Implements(marshalerType) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return writesValidIn(t.Elem(), seen)
	case reflect.Map:
		return writesValidIn(t.Key(), seen) && writesValidIn(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if !writesValidIn(t.Field(i).Type, seen) {
				return false
			}
		}
	}
	return true
}
