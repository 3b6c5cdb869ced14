package codec

import (
	"reflect"

	"github.com/adapterkit/adapterkit/internal/jsoncodec"
)

// Error is a value that does not decode. Its text is one line that names the field and
// says what was expected, in JSON's terms rather than Go's, e.g.
//
//	field "warehouse" is not known (known: sku, qty)
//	field "qty": 9223372036854775808 does not fit int64
//	field "items[2].name": expected a string, got a number
//
// Its exported fields are:
//
//   - Path string: the field concerned: member names joined with dots, array indexes
//     and map keys in brackets ("items[2].name", "labels[site]"); empty for the value
//     itself.
//   - Detail string: what is wrong, e.g. "expected a string, got a number".
//   - Known []string: the struct's field names, for a member that names none of them.
//
// Its methods (of *Error) are Error, which returns that text, and Unwrap, which returns
// ErrDecode: errors.Is(err, ErrDecode) holds, and errors.As(err, &e) with e a *Error
// finds it. (Error is an alias of the implementation's type, whose own documentation is
// internal to the module: these are its exported fields and methods.)
type Error = jsoncodec.Error

// Unknown is what decoding does with an object member that names no field of the
// struct it is decoded into: [RefuseUnknown] or [IgnoreUnknown].
type Unknown = jsoncodec.Unknown

// Policies for unknown members.
const (
	// RefuseUnknown: an *Error naming the member and the known fields. What an adapter
	// applies to params: a host setting a field the adapter does not know would
	// otherwise be ignored silently.
	RefuseUnknown = jsoncodec.RefuseUnknown
	// IgnoreUnknown: the member is skipped (still checked to be JSON). What a host
	// applies to results, so that an adapter may add result fields within a service
	// version without breaking the hosts built before.
	IgnoreUnknown = jsoncodec.IgnoreUnknown
)

// ErrDecode is the cause of every *Error: a JSON value that does not decode into the
// Go value it is meant for.
var ErrDecode = jsoncodec.ErrDecode

// DecodeValue decodes the JSON value data into target, a non-nil pointer. An empty data
// is taken as null, and null leaves the target as it is (so does a null member for its
// field, and an absent member): decode into a zero value, members present are stored,
// others keep what they had. The error is an *Error.
func DecodeValue(data []byte, target any, unknown Unknown) error {
	return jsoncodec.DecodeValue(data, target, unknown)
}

// Append appends v encoded as one JSON value to dst, exactly as encoding/json encodes
// it (json tags, omitempty, embedded structs inlined, []byte as base64, floats in
// their shortest exact form, U+2028 and U+2029 escaped) except that <, > and & are not
// escaped. Plain data types are written straight into dst by a per-type encoder; others
// (types with their own MarshalJSON, for instance) go through encoding/json.
func Append(dst []byte, v any) ([]byte, error) { return jsoncodec.Append(dst, v) }

// CheckType returns nil when values of type t can make the trip a typed call gives
// them, encoded with [Append] on one side and decoded on the other, and come back as
// the same value; otherwise an *Error, one line naming the field (as a path of JSON
// member names) and the Go type that cannot, e.g.
//
//	field "done": chan struct {} cannot be sent
//	field "src": io.Reader cannot be received: only an empty interface can be filled
//
// Refused: channels, functions, complex numbers and unsafe pointers (encoding/json
// refuses them) and uintptr (an address in this process); interfaces with methods (the
// decoder cannot know what to make); map keys other than strings, integers and
// TextMarshalers with UnmarshalText; a type that writes itself with MarshalJSON (or
// MarshalText) but cannot read itself back with UnmarshalJSON (or UnmarshalText or
// UnmarshalJSON), or reads itself from a string with UnmarshalText while it is written
// as something else; an embedded pointer to a struct; two fields of one object (an
// embedded struct's included) with the same name; the json tag option ",string". An
// empty interface is accepted: it receives JSON's own shapes (see the
// package documentation), which is what a caller of a field of type any means.
//
// package contract calls it when a method is declared, so that a type that would fail
// at run time is refused where it is written. The encoder and decoder of a type it
// accepts are built when a value of it is first encoded or decoded, once per type: a
// contract is declared when its package is initialised, at every start of an adapter
// or host, and most starts call few of its methods.
func CheckType(t reflect.Type) error { return jsoncodec.CheckType(t) }
