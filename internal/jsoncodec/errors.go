package jsoncodec

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// ErrDecode is codec.ErrDecode, the cause of every *Error: a JSON value that does not
// decode into the Go value it is meant for.
var ErrDecode = errors.New("codec: value does not decode")

// errKind classifies a decode error.
type errKind int

// Kinds of decode error.
const (
	// kindSyntax: the text is not one valid JSON value of valid UTF-8.
	kindSyntax errKind = iota + 1
	// kindUnknown: an object has a member that names no field of the struct.
	kindUnknown
	// kindDuplicate: an object names the same member twice.
	kindDuplicate
	// kindType: a value of another JSON kind than the one expected (a string for a
	// number, an array for an object, 1.5 for an integer...).
	kindType
	// kindRange: a number that does not fit the field (300 for an 8-bit integer,
	// 1e400 for a float, a negative number for an unsigned integer).
	kindRange
	// kindUnsupported: the Go type cannot be decoded into at all (a channel, a
	// function...).
	kindUnsupported
)

var kindNames = [...]string{kindSyntax: "syntax", kindUnknown: "unknown field", kindDuplicate: "duplicate field",
	kindType: "type", kindRange: "range", kindUnsupported: "unsupported type"}

func (k errKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is codec.Error, a value that does not decode, whose doc shows its text: one
// line naming the field (Path) and what was expected (Detail) in JSON's terms. Package
// codec's doc comment of the alias lists the fields too, since godoc does not show the
// fields of an alias to an internal type: a change of them is a change of both.
// errors.Is(err, ErrDecode) holds.
type Error struct {
	kind errKind
	// Path is the field concerned: member names joined with dots, array indexes and map
	// keys in brackets ("items[2].name", "labels[site]"); empty for the value itself.
	Path string
	// Detail says what is wrong, e.g. "expected a string, got a number".
	Detail string
	// Known lists the struct's field names, for a member that names none of them.
	Known []string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.kind == kindUnknown {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Path))
		b.WriteString(" is not known (known: ")
		if len(e.Known) == 0 {
			b.WriteString("none")
		}
		b.WriteString(strings.Join(e.Known, ", "))
		b.WriteString(")")
		return b.String()
	}
	if e.Path != "" {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Path))
		b.WriteString(": ")
	}
	b.WriteString(e.Detail)
	return b.String()
}

// Unwrap returns ErrDecode.
func (e *Error) Unwrap() error { return ErrDecode }

// under prefixes the path of e with a field name (seg is "name", or "[3]" for an index).
func (e *Error) under(seg string) *Error {
	switch {
	case e.Path == "":
		e.Path = seg
	case strings.HasPrefix(e.Path, "["):
		e.Path = seg + e.Path
	default:
		e.Path = seg + "." + e.Path
	}
	return e
}

func typeErr(detail string) *Error { return &Error{kind: kindType, Detail: detail} }

// refused is the error for a value that the type's own UnmarshalJSON or UnmarshalText
// (or a map key's UnmarshalText) refuses: what is a JSON description of the value
// ("a string", "the number 7"), and the method's error is kept, on one line, e.g.
//
//	field "at": time.Time refuses a string: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"
func refused(t reflect.Type, what string, err error) *Error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	return &Error{kind: kindType, Detail: t.String() + " refuses " + what + ": " + msg}
}

// got describes a JSON value for an error message: its kind, and a short excerpt for
// numbers and literals.
func got(lit []byte) string {
	if len(lit) == 0 {
		return "nothing"
	}
	switch lit[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return string(lit)
	case 'n':
		return "null"
	}
	return "the number " + excerpt(lit)
}

// excerpt shortens long literals in messages.
func excerpt(lit []byte) string {
	if len(lit) > 40 {
		return string(lit[:40]) + "…"
	}
	return string(lit)
}
