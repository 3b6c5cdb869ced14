// Package codec turns protocol params and results into Go values and back, for both
// ends of a connection: the adapter SDK (package plugin: params in, results out) and
// the host (package registry: params out, results in). One package, so both ends apply
// the same rules.
//
// In the module's layers it sits above limits, wire and the shared internal packages,
// and below contract and both ends of a connection: it knows no connection and no
// process. Its implementation is the shared package internal/jsoncodec, which the
// envelope decoder's JSON scanner serves (so the JSON grammar and UTF-8 rules are
// written once), and which the module's own layers call for what this package does not
// export (decoding a frame already validated, with strings sharing its memory; encoding
// long strings by reference): this package is that implementation's public face, with
// the same rules.
//
// # Decoding
//
// A member goes to the field whose json tag name (the Go field name when there is no
// tag) it matches exactly, without case folding; a member naming no field is refused
// (or skipped, see [Unknown]). One policy for every value: numbers are exact (a number
// that does not fit its field, or is not integral for an integer, is an error naming
// the field, never a rounded or wrapped value); each JSON kind goes only into its own
// kind of field; null leaves the target as it is; a member named twice is refused; a
// type that decodes itself (UnmarshalJSON, then UnmarshalText, or mapstructure's
// UnmarshalMapstructure) is asked to. The decoder works in one pass over the text,
// straight into the Go value, and does not link mapstructure, which stays the
// reference of internal/jsoncodec's differential fuzz tests.
//
// A failure is an *Error whose text is one line naming the field and what was expected
// in JSON's terms, e.g. `field "qty": 9223372036854775808 does not fit int64`.
//
// # Encoding and round trips
//
// [Append] encodes as encoding/json does, without HTML escaping, except that a
// MarshalJSON or MarshalText with a pointer receiver is called wherever the type
// appears; NaN and infinities are refused. Every value Append encodes decodes back to
// the same value, except where JSON imposes otherwise (bad UTF-8, nil behind pointers,
// empty omitempty collections, empty interfaces). [CheckType] refuses, with one line
// naming the field and the type, the Go types that cannot make the trip at all;
// package contract applies it when a method is declared.
//
// docs/codec.md in the repository states every rule in full, with the exceptions of
// the round trip and the types CheckType refuses.
package codec
