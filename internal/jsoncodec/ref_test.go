package jsoncodec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// decodeRef is the reference decoder of the tests: the JSON text becomes a tree
// (objects as map[string]any, numbers as json.Number), which mapstructure decodes into
// v (the element of a pointer) with json tag names, exact name matching and embedded
// structs squashed. The hook gives numbers, strings and []byte the same rules as the
// package's decoder, which must agree with it (FuzzDifferential, FuzzRoundTrip).
func decodeRef(data []byte, v reflect.Value, unknown Unknown) error {
	if errs := refErrors(data, v, false, unknown); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// refErrors runs the mapstructure path and returns every failure it reports, those of
// mapstructure first, then the unknown members in order of their path. mapstructure
// reports unknown members only when nothing else failed; with errorUnused (for the
// differential fuzz target) it reports them beside the other failures too, and its own
// errors, which are then those, count as unknown members.
func refErrors(data []byte, v reflect.Value, errorUnused bool, unknown Unknown) []*Error {
	d := decoder{b: data}
	tree, perr := d.any(false)
	if perr != nil {
		return []*Error{perr}
	}
	d.ws()
	if d.i != len(d.b) {
		return []*Error{d.syntax("data after the JSON value")}
	}
	md := &mapstructure.Metadata{}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook:  mapstructure.DecodeHookFuncType(hook),
		Squash:      true,
		TagName:     "json",
		MatchName:   func(key, field string) bool { return key == field },
		Metadata:    md,
		ErrorUnused: errorUnused && unknown == RefuseUnknown,
		Result:      v.Addr().Interface(),
	})
	if err != nil {
		return []*Error{{kind: kindUnsupported, Detail: err.Error()}}
	}
	var errs []*Error
	if err := dec.Decode(tree); err != nil {
		errs = leaves(err, errorUnused)
		if len(errs) == 0 {
			errs = append(errs, &Error{kind: kindType, Detail: err.Error()})
		}
	}
	if unknown == IgnoreUnknown {
		return errs
	}
	sort.Strings(md.Unused)
	for _, path := range md.Unused {
		parent := ""
		for i := len(path) - 1; i >= 0; i-- {
			if path[i] == '.' || path[i] == '[' {
				parent = path[:i]
				break
			}
		}
		errs = append(errs, &Error{kind: kindUnknown, Path: path, Known: planFor(v.Type()).knownAt(parent)})
	}
	return errs
}

// hook checks each value against its target before mapstructure stores it, with the
// rules the direct decoder applies: a number goes through parseNumber, a string only
// into a string (or []byte as base64), an object only into a struct or map, an array
// only into a slice or array. An empty interface receives the value as encoding/json
// gives it (numbers as float64).
func hook(_ reflect.Type, to reflect.Type, data any) (any, error) {
	if data != nil && reflect.TypeOf(data) == to {
		return data, nil // made by this hook one level up (a key, a self-decoded value)
	}
	switch unmarshalOf(to) {
	case umJSON:
		b, err := json.Marshal(data) // json.Number keeps its literal
		if err != nil {
			return nil, &Error{kind: kindType, Detail: err.Error()}
		}
		v := reflect.New(to)
		if err := v.Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
			return nil, refused(to, got(b), err)
		}
		return v.Elem().Interface(), nil
	case umText:
		s, ok := data.(string)
		if !ok {
			b, _ := json.Marshal(data)
			return nil, mismatch(to, b)
		}
		v := reflect.New(to)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return nil, refused(to, "a string", err)
		}
		return v.Elem().Interface(), nil
	}
	if x, ok := data.(map[string]any); ok && to.Kind() == reflect.Map {
		if kk, ok := keyKindOf(to.Key()); ok && kk != keyString {
			// The keys are read here, as the direct decoder reads them; mapstructure
			// then decodes the values into a map of the same key type.
			m := reflect.MakeMapWithSize(reflect.MapOf(to.Key(), anyType), len(x))
			for k, e := range x {
				kv, err := mapKey(kk, to.Key(), k)
				if err != nil {
					return nil, err.under("[" + k + "]")
				}
				m.SetMapIndex(kv, reflect.ValueOf(&e).Elem())
			}
			return m.Interface(), nil
		}
	}
	switch to.Kind() {
	case reflect.Pointer:
		return data, nil
	case reflect.Interface:
		if to.NumMethod() == 0 {
			return floats(data)
		}
		return data, nil
	}
	if to == reflect.TypeFor[json.RawMessage]() {
		b, err := json.Marshal(data) // json.Number keeps its literal
		if err != nil {
			return nil, &Error{kind: kindType, Detail: err.Error()}
		}
		return json.RawMessage(b), nil
	}
	var err *Error
	switch x := data.(type) {
	case json.Number:
		var v any
		if v, err = numberValue(string(x), to); err == nil {
			return v, nil
		}
	case string:
		switch {
		case to.Kind() == reflect.String && to != numberType:
			return data, nil
		case isBytes(to):
			b, berr := base64.StdEncoding.DecodeString(x)
			if berr != nil {
				return nil, typeErr("expected a base64 string, got a string that is not base64")
			}
			return reflect.ValueOf(b).Convert(to).Interface(), nil
		}
		err = mismatch(to, []byte(`""`))
	case bool:
		if to.Kind() == reflect.Bool {
			return data, nil
		}
		err = mismatch(to, []byte(map[bool]string{true: "true", false: "false"}[x]))
	case map[string]any:
		if to.Kind() == reflect.Struct || to.Kind() == reflect.Map {
			return data, nil
		}
		err = mismatch(to, []byte("{"))
	case []any:
		if (to.Kind() == reflect.Slice && !isBytes(to)) || to.Kind() == reflect.Array {
			return data, nil
		}
		err = mismatch(to, []byte("["))
	default:
		return data, nil
	}
	return nil, err
}

// numberValue is parseNumber's result as a Go value of type t.
func numberValue(lit string, t reflect.Type) (any, *Error) {
	v := reflect.New(t).Elem()
	if err := setNumber([]byte(lit), v); err != nil {
		return nil, err
	}
	return v.Interface(), nil
}

// floats returns a tree with its json.Numbers made float64, as an empty interface
// receives them.
func floats(data any) (any, error) {
	switch x := data.(type) {
	case json.Number:
		n, err := parseNumber(string(x), anyType)
		if err != nil {
			return nil, err
		}
		return n.f, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			f, err := floats(e)
			if err != nil {
				return nil, err.(*Error).under("[" + k + "]")
			}
			m[k] = f
		}
		return m, nil
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			f, err := floats(e)
			if err != nil {
				return nil, err
			}
			a[i] = f
		}
		return a, nil
	}
	return data, nil
}

// leaves returns every failure in mapstructure's error tree as an *Error, in order,
// named by the field path mapstructure gives it.
func leaves(err error, nativeIsUnknown bool) []*Error {
	native := kindType
	if nativeIsUnknown {
		native = kindUnknown
	}
	var out []*Error
	var walk func(err error, name string)
	walk = func(err error, name string) {
		switch e := err.(type) {
		case *Error:
			c := *e
			if c.Path == "" {
				c.Path = name
			} else if name != "" {
				c.under(name)
			}
			out = append(out, &c)
		case *mapstructure.DecodeError:
			if e.Unwrap() == nil {
				out = append(out, &Error{kind: native, Path: e.Name(), Detail: e.Error()})
				return
			}
			walk(e.Unwrap(), e.Name())
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x, name)
			}
		default:
			if u := errors.Unwrap(err); u != nil {
				walk(u, name)
				return
			}
			out = append(out, &Error{kind: native, Path: name, Detail: err.Error()})
		}
	}
	walk(err, "")
	return out
}

// knownAt returns the field names of the struct found at a path below p (as
// mapstructure names it), or nil when the path cannot be followed.
func (p *plan) knownAt(path string) []string {
	for path != "" && p != nil {
		for p != nil && p.kind == reflect.Pointer {
			p = p.elem
		}
		if p == nil {
			return nil
		}
		switch {
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 || (p.kind != reflect.Slice && p.kind != reflect.Map) {
				return nil
			}
			p, path = p.elem, strings.TrimPrefix(path[end+1:], ".")
		case p.kind == reflect.Struct:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			n := p.fieldIndex([]byte(path[:end]))
			if n < 0 {
				return nil
			}
			p, path = p.fields[n].p, strings.TrimPrefix(path[end:], ".")
		default:
			return nil
		}
	}
	for p != nil && p.kind == reflect.Pointer {
		p = p.elem
	}
	if p == nil || p.kind != reflect.Struct {
		return nil
	}
	return p.known
}
