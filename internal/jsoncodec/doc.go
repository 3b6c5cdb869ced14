// Package jsoncodec implements package codec: the rules by which protocol params and
// results become Go values and back, which codec's package doc states for users. Package
// codec is a facade over it (aliases of its types, calls of its functions), so both are
// one implementation and one set of rules.
//
// It lives here, shared by the layers that use it, because the module's own layers need
// more than codec may export: the adapter SDK (package plugin) and the host's typed
// client (package registry) call, as plain functions,
//
//   - [DecodeOwned]: decoding a value the envelope decoder has already validated, with
//     long strings sharing the frame's memory;
//   - [AppendSpliced]: encoding with long strings referenced instead of copied;
//   - [WritesValid]: whether a type's encoding is always valid JSON, so that params
//     written for it need no second check.
//
// Each trusts its caller with something a user of codec could get wrong (see their
// doc comments), so only code inside this module can reach them: an internal package
// cannot be imported from outside it.
//
// In the module's layers it is shared (internal) code: it imports the envelope
// decoder's JSON scanner (package internal/proto, so the grammar and UTF-8 rules are
// written once), the frame writer's Splice (so a result's long strings are queued as
// they are) and the standard library, and nothing that knows a connection or a
// process. [Known] is what the envelope decoder and DecodeOwned tell each other about a
// validated text.
//
// The tests keep mapstructure as the reference decoder (FuzzDifferential; the tests
// only link it) and fuzz the decoder (FuzzDecode), the encoder against encoding/json
// (FuzzEncode), the round trip (FuzzRoundTrip), the validated-text decoder against the
// checking one (FuzzDecodeValid) and WritesValid against what Append writes
// (FuzzWritesValid).
package jsoncodec
