package codec

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/validjson"
)

func init() { validjson.AppendSpliced = appendSpliced }

// splicer collects, while a value is encoded, the strings written by reference instead
// of being copied: a sender of a large value writes the text and those strings in turn,
// so a string of megabytes is never copied on its way to the pipe. Go strings never
// change, so referring to one is as good as a copy for as long as the reference lives.
type splicer struct {
	min     int
	splices []validjson.Splice
}

var splicers = sync.Pool{New: func() any { return new(splicer) }}

// appendString writes s's quotes to dst and s itself as a splice when s is long and
// would be written as it is; otherwise it copies s, escaped, as appendString does.
func (sp *splicer) appendString(dst []byte, s string) []byte {
	if len(s) < sp.min || !proto.Verbatim(s) {
		return appendString(dst, s)
	}
	dst = append(dst, '"')
	sp.splices = append(sp.splices, validjson.Splice{At: len(dst), Data: unsafe.Slice(unsafe.StringData(s), len(s))})
	return append(dst, '"')
}

// appendSpliced is validjson.AppendSpliced: Append with strings of at least min bytes
// written by reference. A value that Append writes with encoding/json is copied whole.
func appendSpliced(dst []byte, v any, min int, splices []validjson.Splice) ([]byte, []validjson.Splice, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, "null"...), splices, nil
	}
	sp := splicers.Get().(*splicer)
	sp.min, sp.splices = max(min, 1), splices
	out, err := encoderFor(rv.Type()).enc(dst, rv, sp)
	got := sp.splices
	sp.splices = nil
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
