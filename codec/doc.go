// Package codec turns protocol params and results into Go values and back, for both
// ends of a connection: the adapter SDK (package plugin: params in, results out) and
// the host (package registry: params out, results in). One package, so both ends apply
// the same rules.
//
// It sits just above runtime/wire (whose token scanner it reuses, so the JSON grammar
// and UTF-8 rules are written once) and below runtime, plugin and registry:
// limits < runtime/wire < codec < contract < runtime < plugin < ... < registry.
//
// # Decoding
//
// mapstructure is the decoding contract: json tag names (the Go field name when there
// is no tag), names matched exactly, embedded structs squashed, a member naming no
// field refused. On top of it, one policy for every value:
//
//   - Numbers are exact. A number is parsed for its target: every int64 and uint64
//     value, 2^53+1, every float64 in its shortest form. A number that does not fit
//     (300 for an int8, -1 for a uint, 1e400 for a float64) or is not integral for an
//     integer field is an error naming the field, never a rounded or wrapped value.
//     json.Number keeps the literal. An empty interface receives numbers as float64,
//     as encoding/json gives them (objects as map[string]any, arrays as []any).
//   - A string goes only into a string field (or []byte, as base64, which is how
//     encoding/json writes it); a number, bool, object or array only into its own kind.
//   - null leaves the target as it is, like an absent member: decode into a zero value.
//   - An object naming the same member twice is refused.
//
// A direct decoder applies that contract in one pass over the text, straight into the
// Go value, with a per-type plan built once; types it does not handle (arrays, embedded
// pointers, squash or remain tags, json.RawMessage fields, types implementing
// mapstructure.Unmarshaler...) go through mapstructure itself over a decoded tree. A
// differential fuzz target (FuzzDifferential) checks that both give the same value or
// the same kind of error.
//
// A failure is an *Error whose text is one line naming the field and what was expected
// in JSON's terms, e.g. `field "qty": 9223372036854775808 does not fit int64`.
//
// # Encoding
//
// [Append] encodes with encoding/json (json tags, omitempty, embedded structs inlined),
// without HTML escaping.
package codec
