// Package validjson lets the module's own layers skip checking a JSON text a second
// time when they know it to be valid: a frame's params or result value, which the
// envelope decoder checked whole (UTF-8 and escapes included). It is a hand-over point,
// not an implementation: package codec sets DecodeOwned and AppendSpliced when it is
// initialized, and only code inside this module can import an internal package, so no
// caller outside it can pass a text nobody checked as checked. The adapter SDK (decoding
// params, encoding results) and the typed client (decoding results) call them; both
// import package codec, which sets them before any of their code runs.
//
// It is a hand-over through variables rather than exported functions of codec because
// codec's exported API is what users may call, and these must not be: DecodeOwned's
// strings share the caller's buffer, and AppendSpliced's splices share the value's
// strings. BENCH.md ("What the large-value hand-overs are worth") gives the figures
// that keep them.
//
// In the layers it is shared: it imports internal/proto and internal/framewriter only.
package validjson

import (
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// DecodeOwned decodes data, a JSON value already validated as a whole, into target (a
// non-nil pointer), as codec.DecodeValue does, except that long strings share data's
// memory (data must never change afterwards); ignoreUnknown skips object members that name no
// field. known, if not nil, says where the validation found data's long strings
// (Long): their ends are not looked for again; and DecodeOwned adds to its Verbatim
// the long strings it decoded that share data's memory and are known to be written as
// they are. The error is a *codec.Error. Set by package codec, which every caller
// imports.
var DecodeOwned func(data []byte, known *Known, target any, ignoreUnknown bool) error

// Known is what the envelope decoder learnt of a validated text's long strings, for its
// decoder, and what the decoder learnt of the strings it made, for an encoder.
type Known struct {
	// Long are the text's long strings (proto.Message.Strings).
	Long []proto.LongString
	// Verbatim are the contents of strings of the text, shared by values decoded from
	// it, that package codec would write exactly as they are (proto.Verbatim): an
	// encoder splices a string that lies within one, on rune boundaries, without
	// checking it again.
	Verbatim [][]byte
}

// Splice is a run of bytes that belongs at offset At of an encoded text but was not
// copied into it: the text is written up to At, then Data, then on from At. Data is the
// memory of an immutable Go string (package codec writes long strings so); it must never
// be written to.
type Splice = framewriter.Splice

// AppendSpliced appends v encoded as codec.Append encodes it to dst (verbatim: see
// Known.Verbatim), except that every
// string of at least min bytes that codec would write exactly as it is (valid UTF-8,
// nothing to escape) gets its quotes in dst and its bytes as a Splice appended to
// splices (At an index of the returned slice) instead of being copied: the bytes of the
// text with its splices are those codec.Append writes. A sender that writes the pieces
// in order spares the copy of a large string. Set by package codec.
var AppendSpliced func(dst []byte, v any, min int, verbatim [][]byte, splices []Splice) ([]byte, []Splice, error)
