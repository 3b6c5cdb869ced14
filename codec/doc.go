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
// tag) it matches exactly, without case folding; embedded structs without a tag name
// are inlined; a member naming no field is refused (or skipped, see [Unknown]). The members are the ones the encoder writes, so whatever it sends comes back
// to the same field, and a field tagged "-" is neither written nor read (mapstructure
// would fill it from a member named "-"). One policy for every value:
//
//   - Numbers are exact. A number is parsed for its target: every int64 and uint64
//     value, 2^53+1, every float64 in its shortest form. A number that does not fit
//     (300 for an int8, -1 for a uint, 1e400 for a float64) or is not integral for an
//     integer field is an error naming the field, never a rounded or wrapped value.
//     json.Number keeps the literal. An empty interface receives JSON's own shapes, as
//     encoding/json gives them: map[string]any, []any, string, bool, nil, and numbers
//     as float64 (so an integer beyond 2^53 there is the nearest float64: give exact
//     numbers a typed field or json.Number).
//   - A string goes only into a string field (or []byte, as base64, which is how
//     encoding/json writes it); a number, bool, object or array only into its own kind.
//   - null leaves the target as it is, like an absent member: decode into a zero value.
//   - An object naming the same member twice is refused.
//   - A type that decodes itself is asked to, as encoding/json asks it: UnmarshalJSON
//     (given the value's text) first, then UnmarshalText (given a string's contents;
//     any other JSON kind is refused), on the type or its pointer. time.Time,
//     netip.Addr, json.RawMessage and enums with UnmarshalText are read this way. Its
//     error becomes the field's, e.g. `field "level": api.Level refuses a string:
//     unknown level "max"`.
//   - A map key is read as the encoder wrote it: a string kind as it is, a
//     TextUnmarshaler from its text, an integer from its digits.
//   - A Go array takes a JSON array of at most its length; the elements left over are
//     zero.
//   - A field whose type cannot be received (a channel, a function, an interface with
//     methods; see CheckType) fails only when a member names it, so a configuration
//     struct may hold one that is set in code.
//   - A type with mapstructure's UnmarshalMapstructure method (and no UnmarshalJSON or
//     UnmarshalText) is handed the value as mapstructure would: a tree of
//     map[string]any, []any, string, bool, nil and json.Number.
//
// The decoder applies these rules in one pass over the text, straight into the Go
// value, with a per-type plan built once (so a type without Unmarshal methods pays
// nothing for them). It does not link mapstructure: that package imports net, and
// package net makes every adapter built with cgo enabled a dynamically linked program,
// about a millisecond slower to start. The tests (internal/jsoncodec's) keep
// mapstructure as the reference: a differential fuzz target (FuzzDifferential) and the
// round-trip fuzz target check that both give the same value or the same kind of error.
//
// A failure is an *Error whose text is one line naming the field and what was expected
// in JSON's terms, e.g. `field "qty": 9223372036854775808 does not fit int64`.
//
// # Encoding
//
// [Append] encodes as encoding/json does (json tags, omitempty, embedded structs
// inlined, MarshalJSON then MarshalText honoured), without HTML escaping, with one
// difference: a MarshalJSON or MarshalText with a pointer receiver is called wherever
// the type appears, also where the value is not addressable (a map's values, a struct
// passed by value), where encoding/json silently writes the struct's fields instead.
// NaN and infinities are refused.
//
// # Round trips
//
// Every value Append encodes decodes back to the same value (reflect.DeepEqual, or the
// type's own Equal, as for a time.Time, which comes back as the same instant at the same
// offset but without its location's name), with these exceptions that JSON imposes: a
// string that is not UTF-8 is sent with U+FFFD for its bad bytes; a pointer to a nil
// map, slice, pointer or interface is null and comes back nil; an omitempty field
// holding an empty slice or map comes back nil; an empty interface comes back in JSON's
// shapes. FuzzRoundTrip sends values of generated struct types (nested, embedded,
// pointers, maps with every key kind, slices, self-encoding fields, time.Time,
// netip.Addr, time.Duration, []byte, any) and requires them back.
//
// [CheckType] refuses, with one line naming the field and the type, the Go types
// that cannot make the trip at all: channels, functions, complex numbers, uintptr and
// unsafe pointers, interfaces with methods, unsupported map keys, a type that writes
// itself but cannot read itself back, embedded struct pointers, two fields of one
// object with the same name, the ",string" tag option and mapstructure's ",squash" and
// ",remain" (which the encoder would not apply). package contract applies it
// when a method is declared.
package codec
