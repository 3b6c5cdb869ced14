package jsoncodec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

var fuzzSeeds = []string{
	`{}`, `{"id":7,"tags":{"a":-1},"i":-3,"U8":255,"f32":1.5,"f":0.1,"s":"h\u00e9\n","n":12.50,"ok":true}`,
	`{"p":{"a":1,"b":"x","c":[1,2]},"l":[{"a":-128}],"m":{"k":{"c":[]}},"pp":1,"bs":"AQI="}`,
	`{"x":{"a":[1,2.5,"s",null,true]}}`, `{"i":1.5}`, `{"i":1e400}`, `{"u64":-0}`, `[1,2,3]`,
	`{"v":1,"next":{"v":2,"next":null}}`, `"\ud83d\ude00"`, `9007199254740993`, `{"a":{"a":1}}`,
	`{"k":[1.5,-0,1e-400]}`, `[{"id":1},null]`, `{"i":1,"i":2}`, `true`, `null`,
}

// FuzzDifferential: the direct decoder and the mapstructure path give the same value,
// or both fail with the direct decoder's error among the kinds the mapstructure path
// reports; under both policies for unknown members (which >= 128 ignores them). Text that is not JSON, or names a member twice, fails on both.
func FuzzDifferential(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		typ := targets[int(which)%len(targets)]
		p := planFor(typ)
		fast := reflect.New(typ)
		ref := reflect.New(typ)
		unknown := Unknown(which >= 128)
		ferr := decodeFast(data, p, fast.Elem(), unknown)
		rerrs := refErrors(data, ref.Elem(), true, unknown)
		if ferr == nil && len(rerrs) == 0 {
			if !reflect.DeepEqual(fast.Interface(), ref.Interface()) {
				t.Fatalf("%v from %q: direct %#v, mapstructure %#v", typ, data, fast.Elem(), ref.Elem())
			}
			return
		}
		if (ferr == nil) != (len(rerrs) == 0) {
			t.Fatalf("%v from %q: direct error %v, mapstructure errors %v", typ, data, ferr, rerrs)
		}
		if rerrs[0].kind == kindSyntax || rerrs[0].kind == kindDuplicate {
			return // the direct decoder may meet another failure first
		}
		kinds := make([]errKind, len(rerrs))
		for i, e := range rerrs {
			kinds[i] = e.kind
		}
		if !slices.Contains(kinds, ferr.kind) {
			t.Fatalf("%v from %q: direct error %v (%v), mapstructure errors %v", typ, data, ferr, ferr.kind, rerrs)
		}
	})
}

// FuzzDecode: Decode never panics, and what it accepts re-encodes to text that decodes
// to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v outer
		if err := DecodeValue(data, &v, RefuseUnknown); err != nil {
			return
		}
		b, err := Append(nil, v)
		if err != nil {
			return // e.g. an any holding a value encoding/json refuses
		}
		var back outer
		if err := DecodeValue(b, &back, RefuseUnknown); err != nil {
			t.Fatalf("%q decoded, re-encoded as %s, which does not decode: %v", data, b, err)
		}
	})
}

// FuzzEncode: the direct encoder writes the bytes encoding/json writes, for values of
// every test type decoded from the input, and for any string.
func FuzzEncode(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Add([]byte("\"\xff\xfe\\u2028\u2029\x7f<&>\x00\""), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if s := string(data); true {
			want, err := appendStd(nil, s)
			if got := appendString(nil, s); err != nil || string(got) != string(want) {
				t.Fatalf("string %q: direct %s, encoding/json %s (%v)", s, got, want, err)
			}
		}
		// What a MarshalJSON returns is written as it is only when json.Compact would
		// write it so.
		if plainJSON(data) {
			var buf bytes.Buffer
			if err := json.Compact(&buf, data); err != nil || buf.String() != string(data) {
				t.Fatalf("plain %q: json.Compact gives %q, %v", data, buf.Bytes(), err)
			}
		}
		typ := targets[int(which)%len(targets)]
		v := reflect.New(typ)
		if decodeFast(data, planFor(typ), v.Elem(), IgnoreUnknown) != nil {
			return
		}
		want, werr := appendStd(nil, v.Elem().Interface())
		got, gerr := encoderFor(typ).fn(nil, v.Elem())
		if gerr != nil {
			if werr == nil && typ != reflect.TypeFor[json.Number]() && typ != reflect.TypeFor[outer]() {
				t.Fatalf("%v from %q: the direct encoder gave up; encoding/json wrote %s", typ, data, want)
			}
			return
		}
		if werr != nil || string(got) != string(want) {
			t.Fatalf("%v from %q: direct %s, encoding/json %s (%v)", typ, data, got, want, werr)
		}
	})
}

// FuzzDecodeValid: on a text the envelope decoder accepts as one JSON value (what the
// module hands DecodeOwned: a frame's params or result), the decoder that does not
// check strings again gives exactly what the checking decoder gives, value or error,
// under both policies for unknown members; on any other text it does not panic.
func FuzzDecodeValid(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Add([]byte(`{"s":"a\\\"b\\\\","x":{"a":["\\u00e9\"",{"\\"":1}]}}`), uint8(0))
	f.Add([]byte("{\"s\":\"\xff\x01\\\"}"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		typ := targets[int(which)%len(targets)]
		unknown := which >= 128
		valid := reflect.New(typ)
		verr := DecodeOwned(data, nil, valid.Interface(), Unknown(unknown))
		if proto.ValidateValue(data) != nil {
			return // never handed such a text; it only must not panic
		}
		checked := reflect.New(typ)
		cerr := decode(data, checked.Elem(), Unknown(unknown))
		if (verr == nil) != (cerr == nil) || verr != nil && verr.Error() != cerr.Error() {
			t.Fatalf("%v from %q: valid-text decoder error %v, checking decoder error %v", typ, data, verr, cerr)
		}
		if verr == nil && !reflect.DeepEqual(valid.Interface(), checked.Interface()) {
			t.Fatalf("%v from %q: valid-text decoder %#v, checking decoder %#v", typ, data, valid.Elem(), checked.Elem())
		}
	})
}
