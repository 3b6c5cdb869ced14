// Package validjson lets the module's own layers skip checking a JSON text a second
// time when they know it to be valid: a frame's params or result value, which the
// envelope decoder checked whole (UTF-8 and escapes included), and params that package
// codec wrote from a type whose encoding is always valid JSON. It is a hand-over point,
// not an implementation: package codec sets DecodeOwned and WritesValid when it is
// initialized, and only code inside this module can import an internal package, so no
// caller outside it can pass a text nobody checked as checked.
package validjson

import (
	"context"
	"reflect"
	"unsafe"
)

// DecodeOwned decodes data, a JSON value already validated as a whole, into target (a
// non-nil pointer), as codec.DecodeOwned does (long strings share data's memory; data
// must never change afterwards); ignoreUnknown skips object members that name no
// field. The error is a *codec.Error. Set by package codec, which every caller imports.
var DecodeOwned func(data []byte, target any, ignoreUnknown bool) error

// WritesValid reports whether codec.Append always writes one JSON value of valid UTF-8
// for values of type t, so that the connection need not check params it wrote. Set by
// package codec.
var WritesValid func(t reflect.Type) bool

type vouchKey struct{}

// vouched is the text a context vouches for.
type vouched struct {
	p *byte
	n int
}

// Vouch returns a context that tells the connection that params, written by package
// codec for a type WritesValid accepts, is one valid JSON object: runtime's Call then
// does not check it again. It costs an allocation: callers use it for large params,
// where the check it spares costs far more.
func Vouch(ctx context.Context, params []byte) context.Context {
	return context.WithValue(ctx, vouchKey{}, vouched{unsafe.SliceData(params), len(params)})
}

// Vouched reports whether ctx vouches for exactly params (the same bytes, not a copy).
func Vouched(ctx context.Context, params []byte) bool {
	v, ok := ctx.Value(vouchKey{}).(vouched)
	return ok && len(params) > 0 && v.p == unsafe.SliceData(params) && v.n == len(params)
}

// Splice is a run of bytes that belongs at offset At of an encoded text but was not
// copied into it: the text is written up to At, then Data, then on from At. Data is the
// memory of an immutable Go string (package codec writes long strings so); it must never
// be written to.
type Splice struct {
	At   int
	Data []byte
}

// AppendSpliced appends v encoded as codec.Append encodes it to dst, except that every
// string of at least min bytes that codec would write exactly as it is (valid UTF-8,
// nothing to escape) gets its quotes in dst and its bytes as a Splice appended to
// splices (At an index of the returned slice) instead of being copied: the bytes of the
// text with its splices are those codec.Append writes. A sender that writes the pieces
// in order spares the copy of a large string. Set by package codec.
var AppendSpliced func(dst []byte, v any, min int, splices []Splice) ([]byte, []Splice, error)
