// Package validjson lets the module's own layers decode a JSON text they know to be
// valid — a frame's params or result value, which the envelope decoder checked whole,
// UTF-8 and escapes included — without package codec checking its strings again. It
// is a hand-over point, not an implementation: package codec sets DecodeOwned when it is
// initialized, and only code inside this module can import an internal package, so no
// caller outside it can hand codec a text nobody checked.
package validjson

// DecodeOwned decodes data, a JSON value already validated as a whole, into target (a
// non-nil pointer), as codec.DecodeOwned does (long strings share data's memory; data
// must never change afterwards); ignoreUnknown skips object members that name no
// field. The error is a *codec.Error. Set by package codec, which every caller imports.
var DecodeOwned func(data []byte, target any, ignoreUnknown bool) error
