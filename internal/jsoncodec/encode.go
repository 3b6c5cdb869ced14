package jsoncodec

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// The direct encoder writes what encoding/json (without HTML escaping) writes, straight
// into the caller's buffer, calling a type's own MarshalJSON or MarshalText as
// encoding/json does (and also where encoding/json skips one with a pointer receiver:
// see addressable); anything else (the string option, embedded struct pointers,
// embedded structs with conflicting names, NaN...) makes Append use encoding/json for
// the whole value. FuzzEncode checks both give the same bytes.

// encFunc appends v; errStd means "use encoding/json for the whole value", any other
// error is the value's own (a MarshalJSON that failed).
// sp, when not nil, collects the long strings written by reference (see splicer).
type encFunc func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error)

type encEntry struct{ enc encFunc }

var (
	encCache          sync.Map                       // reflect.Type -> *encEntry, each complete
	encBuilding       = map[reflect.Type]*encEntry{} // under encMu: entries being built
	encMu             sync.Mutex
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	noEncode          = func([]byte, reflect.Value, *splicer) ([]byte, error) { return nil, errStd }
)

// encoderFor returns the encoder of t, building it once.
func encoderFor(t reflect.Type) *encEntry {
	if e, ok := encCache.Load(t); ok {
		return e.(*encEntry)
	}
	encMu.Lock()
	defer encMu.Unlock()
	buildEncoder(t)
	// Entries are published only now, all built: a lock-free Load never sees one
	// whose enc (or an entry it refers to) is still being written.
	for bt, be := range encBuilding {
		encCache.Store(bt, be)
		delete(encBuilding, bt)
	}
	e, _ := encCache.Load(t)
	return e.(*encEntry)
}

// fn encodes v with every string copied into dst.
func (e *encEntry) fn(dst []byte, v reflect.Value) ([]byte, error) { return e.enc(dst, v, nil) }

func (e *encEntry) call(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
	return e.enc(dst, v, sp)
}

// buildEncoder is called with encMu held; a recursive type finds its own entry, whose
// fn is set before any value is encoded.
func buildEncoder(t reflect.Type) encFunc {
	if e, ok := encCache.Load(t); ok {
		return e.(*encEntry).call
	}
	if e, ok := encBuilding[t]; ok {
		return e.call
	}
	e := &encEntry{enc: noEncode}
	encBuilding[t] = e
	e.enc = newEncoder(t)
	return e.call
}

func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// errStd means "use encoding/json for the whole value".
var errStd = errors.New("codec: use encoding/json")

// addressable returns v, or a copy of v that is addressable, so that a method with a
// pointer receiver can be called. encoding/json calls such a MarshalJSON or
// MarshalText only on addressable values (not, for instance, on a map's values or on a
// struct passed by value); the codec calls it wherever the type appears, so that a
// value is written as its type says, as the decoder (which always holds an addressable
// value) reads it back.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// marshalEncoder encodes the types that encode themselves: MarshalJSON first, then
// MarshalText, each on the type or its pointer (a pointer type is encoded as its
// element, so only non-pointer types get here). nil when t does not.
func marshalEncoder(t reflect.Type) encFunc {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return nil
	}
	// byPtr returns what to call the method on: a pointer when the value is addressable
	// (not boxed anew) or the method needs one (onValue false), else the value.
	byPtr := func(v reflect.Value, onValue bool) any {
		if v.CanAddr() || !onValue {
			return addressable(v).Addr().Interface()
		}
		return v.Interface()
	}
	switch {
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		onValue := t.Implements(marshalerType)
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			b, err := byPtr(v, onValue).(json.Marshaler).MarshalJSON()
			if err != nil {
				return nil, &json.MarshalerError{Type: t, Err: err}
			}
			if plainJSON(b) {
				return append(dst, b...), nil // already as Compact would write it
			}
			// As encoding/json: the text must be one JSON value; it is written compact,
			// with U+2028 and U+2029 escaped.
			buf := bytes.NewBuffer(dst)
			if err := json.Compact(buf, b); err != nil {
				return nil, &json.MarshalerError{Type: t, Err: err}
			}
			return buf.Bytes(), nil
		}
	case t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		onValue := t.Implements(textMarshalerType)
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			b, err := byPtr(v, onValue).(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return nil, fmt.Errorf("json: error calling MarshalText for type %v: %w", t, err)
			}
			return appendString(dst, string(b)), nil
		}
	}
	return nil
}

// plainJSON reports whether b is a JSON value that json.Compact would leave as it is
// and that needs no check beyond this look: a string of printable ASCII without
// escapes (a time, an address, an id) or an integer.
func plainJSON(b []byte) bool {
	n := len(b)
	if n >= 2 && b[0] == '"' && b[n-1] == '"' {
		for _, c := range b[1 : n-1] {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
				return false
			}
		}
		return true
	}
	if n > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 1 && b[0] == '0' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// keyEncoder returns how a map key of type kt becomes a member name, as encoding/json
// writes it: a string kind as it is, a TextMarshaler's text, an integer in decimal;
// nil for key types encoding/json refuses.
func keyEncoder(kt reflect.Type) func(k reflect.Value) (string, error) {
	switch {
	case kt.Kind() == reflect.String:
		return func(k reflect.Value) (string, error) { return k.String(), nil }
	case kt.Implements(textMarshalerType) || kt.Kind() != reflect.Pointer && reflect.PointerTo(kt).Implements(textMarshalerType):
		onValue := kt.Implements(textMarshalerType)
		return func(k reflect.Value) (string, error) {
			if k.Kind() == reflect.Pointer && k.IsNil() {
				return "", nil
			}
			var m any
			if onValue {
				m = k.Interface()
			} else {
				m = addressable(k).Addr().Interface()
			}
			b, err := m.(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return "", fmt.Errorf("json: error calling MarshalText for type %v: %w", kt, err)
			}
			return string(b), nil
		}
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(k reflect.Value) (string, error) { return strconv.FormatInt(k.Int(), 10), nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(k reflect.Value) (string, error) { return strconv.FormatUint(k.Uint(), 10), nil }
	}
	return nil
}

func newEncoder(t reflect.Type) encFunc {
	if m := marshalEncoder(t); m != nil {
		return m
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if v.Bool() {
				return append(dst, "true"...), nil
			}
			return append(dst, "false"...), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			return strconv.AppendInt(dst, v.Int(), 10), nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			return strconv.AppendUint(dst, v.Uint(), 10), nil
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			return appendFloat(dst, v.Float(), bits)
		}
	case reflect.String:
		if t == numberType {
			return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
				s := v.String()
				if s == "" {
					s = "0"
				}
				if end, err := proto.ScanNumber([]byte(s), 0); err != nil || end != len(s) {
					return nil, errStd // encoding/json's error
				}
				return append(dst, s...), nil
			}
		}
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if sp != nil {
				return sp.appendString(dst, v.String()), nil
			}
			return appendString(dst, v.String()), nil
		}
	case reflect.Pointer:
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			return elem(dst, v.Elem(), sp)
		}
	case reflect.Interface:
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			e := v.Elem()
			return encoderFor(e.Type()).enc(dst, e, sp)
		}
	case reflect.Slice:
		if isBytes(t) {
			return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
				if v.IsNil() {
					return append(dst, "null"...), nil
				}
				b := v.Bytes()
				dst = append(dst, '"')
				dst = base64.StdEncoding.AppendEncode(dst, b)
				return append(dst, '"'), nil
			}
		}
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = elem(dst, v.Index(i), sp); err != nil {
					return nil, atIndex(err, i)
				}
			}
			return append(dst, ']'), nil
		}
	case reflect.Map:
		key := keyEncoder(t.Key())
		if key == nil {
			return noEncode
		}
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			type member struct {
				name string
				v    reflect.Value
			}
			members := make([]member, 0, v.Len())
			for it := v.MapRange(); it.Next(); {
				name, err := key(it.Key())
				if err != nil {
					return nil, atPath(err, "", "a map key") // no name to give it yet
				}
				members = append(members, member{name, it.Value()})
			}
			slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
			dst = append(dst, '{')
			for i, m := range members {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, m.name)
				dst = append(dst, ':')
				var err error
				if dst, err = elem(dst, m.v, sp); err != nil {
					return nil, atKey(err, m.name)
				}
			}
			return append(dst, '}'), nil
		}
	case reflect.Array:
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = elem(dst, v.Index(i), sp); err != nil {
					return nil, atIndex(err, i)
				}
			}
			return append(dst, ']'), nil
		}
	case reflect.Struct:
		return structEncoder(t)
	}
	return noEncode
}

type encField struct {
	name      string // the member's name, for an error's path
	key       string // `"name":`, escaped
	index     []int
	omitEmpty bool
	omitZero  func(reflect.Value) bool // for omitzero: the value is zero
	fn        encFunc
}

// structEncoder encodes the structs whose fields encoding/json lays out simply: named
// exported fields and untagged embedded structs inlined, with no two fields of the same
// name.
func structEncoder(t reflect.Type) encFunc {
	var fields []encField
	names := map[string]bool{}
	var walk func(t reflect.Type, at []int) bool
	walk = func(t reflect.Type, at []int) bool {
		for i := range t.NumField() {
			f := t.Field(i)
			index := append(slices.Clone(at), i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			omit := false
			var omitZero func(reflect.Value) bool
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					omit = true
				case "omitzero":
					omitZero = zeroTest(f.Type)
				case "", "squash", "remain":
				default:
					return false // string, ...
				}
			}
			if f.Anonymous {
				if f.Type.Kind() != reflect.Struct {
					if !f.IsExported() && f.Type.Kind() != reflect.Pointer {
						continue // encoding/json ignores it
					}
					return false // an embedded pointer: encoding/json's rules
				}
				if !f.IsExported() && name != "" {
					return false
				}
				if name == "" { // inlined, exported or not: its exported fields are t's
					if !walk(f.Type, index) {
						return false
					}
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if names[name] || !validTagName(name) {
				return false
			}
			names[name] = true
			fields = append(fields, encField{name: name, key: string(appendString(nil, name)) + ":", index: index, omitEmpty: omit, omitZero: omitZero, fn: buildEncoder(f.Type)})
		}
		return true
	}
	if !walk(t, nil) {
		return noEncode
	}
	return func(dst []byte, v reflect.Value, sp *splicer) ([]byte, error) {
		dst = append(dst, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fv := v.Field(f.index[0])
			for _, j := range f.index[1:] {
				fv = fv.Field(j)
			}
			if f.omitEmpty && isEmpty(fv) || f.omitZero != nil && f.omitZero(fv) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.key...)
			var err error
			if dst, err = f.fn(dst, fv, sp); err != nil {
				return nil, atField(err, f.name)
			}
		}
		return append(dst, '}'), nil
	}
}

// validTagName: names encoding/json takes from a tag as they are (others it ignores).
func validTagName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf):
			return false
		}
	}
	return s != ""
}

// zeroTest returns how omitzero tells that a value of type t is zero, as encoding/json
// does: its IsZero method if it has one (also with a pointer receiver), else the Go zero
// value.
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	isZeroer := reflect.TypeFor[interface{ IsZero() bool }]()
	switch {
	case t.Implements(isZeroer):
		return func(v reflect.Value) bool {
			if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
				return true
			}
			return v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(isZeroer):
		return func(v reflect.Value) bool {
			return addressable(v).Addr().Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return reflect.Value.IsZero
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// appendFloat formats as encoding/json does (ES6 number formatting).
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// encoding/json's error, word for word, so that the field can be named.
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendString appends s as a JSON string exactly as encoding/json does without HTML
// escaping (the wire package's escaper, shared with the envelopes).
func appendString(dst []byte, s string) []byte { return proto.AppendString(dst, s) }
