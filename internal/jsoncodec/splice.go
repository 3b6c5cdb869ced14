package jsoncodec

import (
	"fmt"
	"reflect"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// splicer collects, while a value is encoded, the strings written by reference instead
// of being copied: a sender of a large value writes the text and those strings in turn,
// so a string of megabytes is never copied on its way to the pipe. Go strings never
// change, so referring to one is as good as a copy for as long as the reference lives.
type splicer struct {
	min      int
	verbatim [][]byte // see Known.Verbatim
	splices  []Splice
}

var splicers = sync.Pool{New: func() any { return new(splicer) }}

// appendString writes s's quotes to dst and s itself as a splice when s is long and
// would be written as it is; otherwise it copies s, escaped, as appendString does.
func (sp *splicer) appendString(dst []byte, s string) []byte {
	if len(s) < sp.min || !sp.knownVerbatim(s) && !proto.Verbatim(s) {
		return appendString(dst, s)
	}
	dst = append(dst, '"')
	sp.splices = append(sp.splices, Splice{At: len(dst), Data: unsafe.Slice(unsafe.StringData(s), len(s))})
	return append(dst, '"')
}

// knownVerbatim reports whether s lies within one of the texts known to be verbatim and
// starts and ends on rune boundaries of it: a part of a string with nothing to escape
// cut where a rune starts has nothing to escape either, and is valid UTF-8.
func (sp *splicer) knownVerbatim(s string) bool {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, v := range sp.verbatim {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		if p < start || p+uintptr(len(s)) > start+uintptr(len(v)) {
			continue
		}
		off := int(p - start)
		end := off + len(s)
		return utf8.RuneStart(v[off]) && (end == len(v) || utf8.RuneStart(v[end]))
	}
	return false
}

// AppendSpliced appends v encoded as [Append] encodes it to dst, except that every
// string of at least min bytes that Append would write exactly as it is (valid UTF-8,
// nothing to escape; or lying, on rune boundaries, within one of verbatim: see
// Known.Verbatim) gets its quotes in dst and its bytes as a Splice appended
// to splices (At an index of the returned slice) instead of being copied: the bytes of
// the text with its splices, written in order, are those Append writes. A sender that
// writes the pieces in turn spares the copy of a large string. A value that Append
// writes with encoding/json is copied whole, with no splice.
//
// Hazards: a splice's Data is the memory of a Go string of v (or of a text in verbatim),
// not a copy. Go strings are immutable, so it must never be written to (the program
// would change, or fault on, a string that other code shares); and it is valid only as
// long as v's strings are referenced, so a sender keeps v alive until the pieces are
// written. verbatim must hold only texts that are valid UTF-8 with nothing to escape,
// as the envelope decoder found them: a splice within one is not checked again.
func AppendSpliced(dst []byte, v any, min int, verbatim [][]byte, splices []Splice) ([]byte, []Splice, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, "null"...), splices, nil
	}
	sp := splicers.Get().(*splicer)
	sp.min, sp.verbatim, sp.splices = max(min, 1), verbatim, splices
	out, err := encoderFor(rv.Type()).enc(dst, rv, sp)
	got := sp.splices
	sp.verbatim, sp.splices = nil, nil
	splicers.Put(sp)
	switch {
	case err == nil:
		return out, got, nil
	case err != errStd:
		return dst, splices, fmt.Errorf("codec: %w", err)
	}
	// Splices made before the encoder gave up point into a text that is discarded.
	clear(got[len(splices):])
	out, err = appendStd(dst, v)
	return out, splices, err
}
