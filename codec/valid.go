package codec

import (
	"reflect"

	"github.com/adapterkit/adapterkit/internal/validjson"
)

func init() {
	validjson.DecodeOwned = decodeValidOwned
}

// decodeValidOwned is decodeAliasing for a data the module's envelope decoder has already
// validated as JSON of valid UTF-8 (a frame's params or result value): its strings are
// not scanned for UTF-8, control characters and escapes a second time. The module's
// own callers reach it through package internal/validjson; it is not exported, so that
// nothing else can hand it a text that was not checked. known (may be nil) says where
// the envelope decoder found data's long strings, whose ends are not looked for again,
// and receives the shared strings known to be verbatim (see validjson.Known).
func decodeValidOwned(data []byte, known *validjson.Known, target any, ignoreUnknown bool) error {
	if len(data) == 0 {
		return nil
	}
	rv := reflect.ValueOf(target).Elem()
	p := planFor(rv.Type())
	d := decoder{b: data, ignore: ignoreUnknown, alias: true, valid: true, known: known}
	if known != nil {
		d.long = known.Long
	}
	if err := d.top(p, rv); err != nil {
		return err
	}
	return nil
}
