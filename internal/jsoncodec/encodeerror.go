package jsoncodec

import (
	"errors"
	"strconv"
)

// encodeError is a value that does not encode (a MarshalJSON or MarshalText that failed,
// a NaN): the field concerned, named as a decoding error names it ("items[2].color",
// "labels[site]"), and the cause. Its text is one line, e.g.
//
//	field "inner.color": json: error calling MarshalText for type kit.Color: unknown color "purple"
//
// errors.As finds the cause (a *json.MarshalerError, ...) through it.
type encodeError struct {
	path string // as Error.Path; "" for the value itself
	what string // when path cannot name it: "a map key"
	err  error
}

func (e *encodeError) Error() string {
	switch {
	case e.path != "" && e.what != "":
		return "field " + strconv.Quote(e.path) + ", " + e.what + ": " + e.err.Error()
	case e.path != "":
		return "field " + strconv.Quote(e.path) + ": " + e.err.Error()
	case e.what != "":
		return e.what + ": " + e.err.Error()
	}
	return e.err.Error()
}

func (e *encodeError) Unwrap() error { return e.err }

// atPath returns err with its path prefixed by prefix (a member name, or "[i]"), and
// what set when given; errStd, which is not an error of the value, is returned as it is.
func atPath(err error, prefix, what string) error {
	if err == errStd {
		return err
	}
	var ee *encodeError
	if !errors.As(err, &ee) || ee != err {
		ee = &encodeError{err: err}
	}
	switch {
	case prefix == "":
	case ee.path == "":
		ee.path = prefix
	case ee.path[0] == '[':
		ee.path = prefix + ee.path
	default:
		ee.path = prefix + "." + ee.path
	}
	if what != "" {
		ee.what = what
	}
	return ee
}

// atField is atPath for a struct member name.
func atField(err error, name string) error { return atPath(err, name, "") }

// atIndex is atPath for an array or slice element.
func atIndex(err error, i int) error { return atPath(err, "["+strconv.Itoa(i)+"]", "") }

// atKey is atPath for a map value.
func atKey(err error, key string) error { return atPath(err, "["+key+"]", "") }
