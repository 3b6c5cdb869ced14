package codec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
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
// into the caller's buffer, for the types whose encoding it knows; anything else (a
// type with its own MarshalJSON or MarshalText, arrays, omitzero or string options,
// embedded structs with conflicting names, NaN...) makes Append use encoding/json for
// the whole value. FuzzEncode checks both give the same bytes.

// encFunc appends v; false means "use encoding/json for the whole value".
type encFunc func(dst []byte, v reflect.Value) ([]byte, bool)

type encEntry struct{ fn encFunc }

var (
	encCache          sync.Map // reflect.Type -> *encEntry
	encMu             sync.Mutex
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	noEncode          = func([]byte, reflect.Value) ([]byte, bool) { return nil, false }
)

// encoderFor returns the encoder of t, building it once.
func encoderFor(t reflect.Type) *encEntry {
	if e, ok := encCache.Load(t); ok {
		return e.(*encEntry)
	}
	encMu.Lock()
	defer encMu.Unlock()
	buildEncoder(t)
	e, _ := encCache.Load(t)
	return e.(*encEntry)
}

func (e *encEntry) call(dst []byte, v reflect.Value) ([]byte, bool) { return e.fn(dst, v) }

// buildEncoder is called with encMu held; a recursive type finds its own entry, whose
// fn is set before any value is encoded.
func buildEncoder(t reflect.Type) encFunc {
	if e, ok := encCache.Load(t); ok {
		return e.(*encEntry).call
	}
	e := &encEntry{fn: noEncode}
	encCache.Store(t, e)
	e.fn = newEncoder(t)
	return e.call
}

func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

func newEncoder(t reflect.Type) encFunc {
	if marshals(t) {
		return noEncode
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.Bool() {
				return append(dst, "true"...), true
			}
			return append(dst, "false"...), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendInt(dst, v.Int(), 10), true }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendUint(dst, v.Uint(), 10), true }
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return appendFloat(dst, v.Float(), bits) }
	case reflect.String:
		if t == numberType {
			return func(dst []byte, v reflect.Value) ([]byte, bool) {
				s := v.String()
				if s == "" {
					s = "0"
				}
				if end, err := proto.ScanNumber([]byte(s), 0); err != nil || end != len(s) {
					return nil, false // encoding/json's error
				}
				return append(dst, s...), true
			}
		}
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return appendString(dst, v.String()), true }
	case reflect.Pointer:
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			return elem(dst, v.Elem())
		}
	case reflect.Interface:
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			e := v.Elem()
			return encoderFor(e.Type()).fn(dst, e)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !marshals(t.Elem()) {
			return func(dst []byte, v reflect.Value) ([]byte, bool) {
				if v.IsNil() {
					return append(dst, "null"...), true
				}
				b := v.Bytes()
				dst = append(dst, '"')
				dst = base64.StdEncoding.AppendEncode(dst, b)
				return append(dst, '"'), true
			}
		}
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var ok bool
				if dst, ok = elem(dst, v.Index(i)); !ok {
					return nil, false
				}
			}
			return append(dst, ']'), true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return noEncode
		}
		elem := buildEncoder(t.Elem())
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			dst = append(dst, '{')
			for i, k := range keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, k.String())
				dst = append(dst, ':')
				var ok bool
				if dst, ok = elem(dst, v.MapIndex(k)); !ok {
					return nil, false
				}
			}
			return append(dst, '}'), true
		}
	case reflect.Struct:
		return structEncoder(t)
	}
	return noEncode
}

type encField struct {
	key       string // `"name":`, escaped
	index     []int
	omitEmpty bool
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
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					omit = true
				case "", "squash", "remain":
				default:
					return false // omitzero, string, ...
				}
			}
			if f.Anonymous {
				if !f.IsExported() || f.Type.Kind() != reflect.Struct {
					return false
				}
				if name == "" {
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
			fields = append(fields, encField{key: string(appendString(nil, name)) + ":", index: index, omitEmpty: omit, fn: buildEncoder(f.Type)})
		}
		return true
	}
	if !walk(t, nil) {
		return noEncode
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		dst = append(dst, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fv := v.Field(f.index[0])
			for _, j := range f.index[1:] {
				fv = fv.Field(j)
			}
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.key...)
			var ok bool
			if dst, ok = f.fn(dst, fv); !ok {
				return nil, false
			}
		}
		return append(dst, '}'), true
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
func appendFloat(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
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
	return dst, true
}

// appendString appends s as a JSON string exactly as encoding/json does without HTML
// escaping (the wire package's escaper, shared with the envelopes).
func appendString(dst []byte, s string) []byte { return proto.AppendString(dst, s) }
