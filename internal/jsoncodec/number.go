package jsoncodec

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
)

var (
	numberType = reflect.TypeFor[json.Number]()
	anyType    = reflect.TypeFor[any]()
)

// expected names what a value of type t is in JSON, for error messages.
func expected(t reflect.Type) string {
	if unmarshalOf(t) == umText {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		if t == numberType {
			return "a number"
		}
		return "a string"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		if isBytes(t) {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Pointer:
		return expected(t.Elem())
	}
	return "any value"
}

// isBytes reports whether the slice type t is written as base64, as encoding/json
// writes a slice of bytes (not of a byte type that encodes itself).
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !marshals(t.Elem())
}

// mismatch is the error for a JSON value lit of the wrong kind for t.
func mismatch(t reflect.Type, lit []byte) *Error {
	return typeErr("expected " + expected(t) + ", got " + got(lit))
}

// numberName is the name of a numeric kind as used in "does not fit" messages.
func numberName(t reflect.Type) string { return t.Kind().String() }

// The parsed form of a number for one target kind.
type number struct {
	i int64
	u uint64
	f float64
}

// parseNumber converts the JSON number literal lit for a target of type t (a numeric
// kind, json.Number, or an empty interface, which takes a float64 as encoding/json
// gives). Both decoding paths use it, so numbers have one set of rules: exact, and an
// error rather than a rounded or wrapped value.
func parseNumber(lit string, t reflect.Type) (number, *Error) {
	var n number
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(lit, 10, t.Bits())
		if err != nil {
			return n, intErr(lit, t, err)
		}
		n.i = i
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u, err := strconv.ParseUint(lit, 10, t.Bits())
		if err != nil {
			if len(lit) > 1 && lit[0] == '-' && isInteger(lit[1:]) {
				return n, &Error{kind: kindRange, Detail: excerpt([]byte(lit)) + " does not fit " + numberName(t)}
			}
			return n, intErr(lit, t, err)
		}
		n.u = u
	case reflect.Float32, reflect.Float64, reflect.Interface:
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(lit, bits)
		if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
			name := numberName(t)
			if t.Kind() == reflect.Interface {
				name = "float64"
			}
			return n, &Error{kind: kindRange, Detail: excerpt([]byte(lit)) + " does not fit " + name}
		}
		n.f = f
	case reflect.String:
		if t != numberType {
			return n, mismatch(t, []byte(lit))
		}
	default:
		return n, mismatch(t, []byte(lit))
	}
	return n, nil
}

func intErr(lit string, t reflect.Type, err error) *Error {
	if errors.Is(err, strconv.ErrRange) {
		return &Error{kind: kindRange, Detail: excerpt([]byte(lit)) + " does not fit " + numberName(t)}
	}
	return typeErr("expected an integer, got the number " + excerpt([]byte(lit)))
}

func isInteger(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// setNumber stores the number lit into v (of a numeric kind, json.Number or an empty
// interface).
func setNumber(lit []byte, v reflect.Value) *Error {
	s := unsafeString(lit)
	n, err := parseNumber(s, v.Type())
	if err != nil {
		return err
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(n.i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(n.u)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(n.f)
	case reflect.String:
		v.SetString(string(lit))
	case reflect.Interface:
		v.Set(reflect.ValueOf(n.f))
	}
	return nil
}
