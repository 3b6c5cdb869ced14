package jsoncodec

import (
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// roundTrip encodes v (a settable value of its type) and decodes the text back with
// both decoders (the direct one when it takes the type, and the mapstructure path),
// failing t unless each gives the same value. It returns false when v does not encode.
func roundTrip(t *testing.T, v reflect.Value) bool {
	t.Helper()
	b, err := Append(nil, v.Interface())
	if err != nil {
		return false
	}
	back := reflect.New(v.Type())
	if err := DecodeValue(b, back.Interface(), RefuseUnknown); err != nil {
		t.Fatalf("%v: %s does not decode: %v", v.Type(), b, err)
	}
	if !same(v, back.Elem()) {
		t.Fatalf("%v: %s decodes to %#v, sent %#v", v.Type(), b, back.Elem(), v)
	}
	ref := reflect.New(v.Type())
	if errs := refErrors(b, ref.Elem(), true, RefuseUnknown); len(errs) > 0 {
		t.Fatalf("%v: %s does not decode on the mapstructure path: %v", v.Type(), b, errs)
	}
	if !same(v, ref.Elem()) {
		t.Fatalf("%v: %s decodes on the mapstructure path to %#v, sent %#v", v.Type(), b, ref.Elem(), v)
	}
	return true
}

var familyTypes = []reflect.Type{
	reflect.TypeFor[family](), reflect.TypeFor[viaRef](), reflect.TypeFor[Stamped](), reflect.TypeFor[Keyed](),
	reflect.TypeFor[map[netip.Addr][]span](), reflect.TypeFor[[]*celsius](), reflect.TypeFor[map[level]*family](),
}

// Each self-encoding type, written by hand: the value comes back, and the text is what
// the type writes (encoding/json's, with pointer receivers honoured everywhere).
func TestSelfEncoding(t *testing.T) {
	at := time.Date(2026, 12, 3, 8, 7, 15, 123456789, time.FixedZone("", -(3*3600+30*60)))
	addr := netip.MustParseAddr("fe80::1%eth0")
	v := family{
		Stamped: Stamped{At: at, Addr: addr, Level: 2, Wait: 90 * time.Second},
		Keyed: Keyed{ByLevel: map[level]string{1: "m"}, ByAddr: map[netip.Addr]int{netip.MustParseAddr("10.0.0.1"): 7},
			ByID: map[int64]Stamped{-9223372036854775808: {}}, ByU8: map[uint8]bool{255: true}},
		When: &at, Blob: []byte{0, 255}, Temp: celsius{-40000}, Temps: map[string]celsius{"in": {21500}},
		Span: span{-1, 2}, Spans: []span{{3, 4}}, Any: map[string]any{"n": 1.5, "l": []any{"x", true, nil}},
		Lvls: []level{0, 2}, Addrs: []*netip.Addr{&addr, nil}, Next: &family{Big: 18446744073709551615},
		Ratio: 0.1, Big: 9007199254740993, Raw: json.RawMessage(`{"k":[1, 2]}`), Count: 3,
	}
	b, err := Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"at":"2026-12-03T08:07:15.123456789-03:30"`, `"addr":"fe80::1%eth0"`, `"level":"high"`, `"wait":90000000000`,
		`"by_level":{"mid":"m"}`, `"by_addr":{"10.0.0.1":7}`, `"by_id":{"-9223372036854775808":{`, `"by_u8":{"255":true}`,
		`"temp":{"mC":-40000}`, `"temps":{"in":{"mC":21500}}`, `"ptemp":null`, `"span":"-1..2"`, `"spans":["3..4"]`,
		`"blob":"AP8="`, `"lvls":["low","high"]`, `"addrs":["fe80::1%eth0",null]`, `"big":9007199254740993`,
		`"raw":{"k":[1,2]}`, `"count":3}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s\nlacks %s", b, want)
		}
	}
	v.Raw = json.RawMessage(`{"k":[1,2]}`) // written compact, as encoding/json does
	if !roundTrip(t, reflect.ValueOf(&v).Elem()) {
		t.Fatal("does not encode")
	}
	// The text encoding/json writes for a pointer to it is the same, but for the map
	// value whose MarshalJSON has a pointer receiver: encoding/json writes its fields
	// (none), which would not read back.
	std, err := json.Marshal(&v)
	if err != nil || string(std) != strings.Replace(string(b), `"temps":{"in":{"mC":21500}}`, `"temps":{"in":{}}`, 1) {
		t.Fatalf("encoding/json: %s (%v)\ncodec: %s", std, err, b)
	}
}

// Refusals by a type's own method name the field and keep the method's words.
func TestSelfEncodingRefusals(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{`{"at":"yesterday"}`, `field "at": time.Time refuses a string: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{`{"at":7}`, `field "at": time.Time refuses the number 7: Time.UnmarshalJSON: input is not a JSON string`},
		{`{"addr":"10.0.0.256"}`, `field "addr": netip.Addr refuses a string: ParseAddr("10.0.0.256"): IPv4 field has value >255`},
		{`{"addr":1}`, `field "addr": expected a string, got the number 1`},
		{`{"level":"max"}`, `field "level": jsoncodec.level refuses a string: unknown level "max"`},
		{`{"by_level":{"max":"x"}}`, `field "by_level[max]": jsoncodec.level refuses the key: unknown level "max"`},
		{`{"by_u8":{"256":true}}`, `field "by_u8[256]": 256 does not fit uint8`},
		{`{"by_id":{"x":{}}}`, `field "by_id[x]": expected an integer key, got "x"`},
		{`{"spans":["1..2",{}]}`, `field "spans[1]": jsoncodec.span refuses an object: not a string: {}`},
		{`{"temps":{"a":{"mC":1.5}}}`, `field "temps[a]": jsoncodec.celsius refuses an object: field "mC": expected an integer, got the number 1.5`},
	} {
		var v family
		err := DecodeValue([]byte(c.in), &v, RefuseUnknown)
		var e *Error
		if !errors.As(err, &e) || (e.kind != kindType && e.kind != kindRange) || err.Error() != c.msg {
			t.Errorf("%s:\n got %v\nwant %s", c.in, err, c.msg)
		}
		ref := reflect.New(reflect.TypeFor[family]())
		if errs := refErrors([]byte(c.in), ref.Elem(), true, RefuseUnknown); len(errs) == 0 || errs[0].kind != e.kind {
			t.Errorf("%s: mapstructure path: %v", c.in, errs)
		}
	}
	// null leaves a self-decoding value as it is, as it does any other.
	v := family{Stamped: Stamped{Level: 1}}
	if err := DecodeValue([]byte(`{"level":null,"at":null}`), &v, RefuseUnknown); err != nil || v.Level != 1 || !v.At.IsZero() {
		t.Fatalf("%v %+v", err, v)
	}
}

// What cannot make the trip is named, with its field, before any value is sent.
func TestCheckType(t *testing.T) {
	type marshalOnly struct{ span2 }
	for _, typ := range append(slices.Clone(familyTypes), reflect.TypeFor[outer](), reflect.TypeFor[node](),
		reflect.TypeFor[any](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[struct {
			Done chan int `json:"-"`
			f    func()
		}](), generated([]byte{6, 3, 7, 1, 200, 9, 2, 161, 5, 255, 0, 250})) {
		if err := CheckType(typ); err != nil {
			t.Errorf("%v: %v", typ, err)
		}
	}
	for _, c := range []struct {
		typ reflect.Type
		msg string
	}{
		{reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), `field "c": chan int cannot be sent`},
		{reflect.TypeFor[chan int](), `chan int cannot be sent`},
		{reflect.TypeFor[struct{ F []func() }](), `field "F": func() cannot be sent`},
		{reflect.TypeFor[struct {
			Stamped
			In struct {
				Z *complex128 `json:"z"`
			} `json:"in"`
		}](), `field "in.z": complex128 cannot be sent`},
		{reflect.TypeFor[struct {
			P unsafe.Pointer `json:"p"`
		}](), `field "p": unsafe.Pointer cannot be sent`},
		{reflect.TypeFor[struct {
			R io.Reader `json:"src"`
		}](), `field "src": io.Reader cannot be received: only an empty interface can be filled`},
		{reflect.TypeFor[struct {
			M map[[2]int]string `json:"m"`
		}](), `field "m": map[[2]int]string cannot be sent: a map key must be a string, an integer or a TextMarshaler with UnmarshalText`},
		{reflect.TypeFor[struct {
			M map[float64]string `json:"m"`
		}](), `field "m": map[float64]string cannot be sent: a map key must be a string, an integer or a TextMarshaler with UnmarshalText`},
		{reflect.TypeFor[map[textOnly]int](), `map[jsoncodec.textOnly]int cannot be sent: a map key must be a string, an integer or a TextMarshaler with UnmarshalText`},
		{reflect.TypeFor[struct{ M marshalOnly }](), `field "M": jsoncodec.marshalOnly cannot be received: it has MarshalJSON but no UnmarshalJSON`},
		{reflect.TypeFor[[]textOnly](), `jsoncodec.textOnly cannot be received: it has MarshalText but no UnmarshalText`},
		{reflect.TypeFor[struct{ U unmarshalTextOnly }](), `field "U": jsoncodec.unmarshalTextOnly cannot be received: it has UnmarshalText but no MarshalText`},
		{reflect.TypeFor[struct {
			N int64 `json:"n,string"`
		}](), `field "n": int64 cannot be received: the json tag option ",string" is not supported`},
		{reflect.TypeFor[struct {
			Stamped
			W int `json:"wait"`
		}](), `field "wait": int cannot be sent: two fields of the object are named "wait"`},
		{reflect.TypeFor[struct {
			*Stamped
		}](), `*jsoncodec.Stamped cannot be received: embed the struct, not a pointer to it`},
		{reflect.TypeFor[struct {
			//lint:ignore SA5008 CheckType must refuse this mapstructure option
			In Stamped `json:",squash"`
		}](), `field "In": jsoncodec.Stamped cannot be sent: the json tag option ",squash" is mapstructure's and the encoder does not apply it (embed the struct to inline its fields)`},
		{reflect.TypeFor[struct {
			//lint:ignore SA5008 CheckType must refuse this mapstructure option
			Rest map[string]any `json:"rest,remain"`
		}](), `field "rest": map[string]interface {} cannot be sent: the json tag option ",remain" is mapstructure's and the encoder does not apply it (embed the struct to inline its fields)`},
	} {
		err := CheckType(c.typ)
		var e *Error
		if !errors.As(err, &e) || e.kind != kindUnsupported || err.Error() != c.msg {
			t.Errorf("%v:\n got %v\nwant %s", c.typ, err, c.msg)
		}
	}
	// A string kind that only reads itself from text is written as that string.
	if err := CheckType(reflect.TypeFor[strictName]()); err != nil {
		t.Fatal(err)
	}
}

// span2 writes itself but cannot read itself back.
type span2 struct{ A int }

func (span2) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

// textOnly writes itself as text but cannot read itself back.
type textOnly struct{ A int }

func (textOnly) MarshalText() ([]byte, error) { return []byte(`x`), nil }

// unmarshalTextOnly reads itself from a string but is written as an object.
type unmarshalTextOnly struct{ A int }

func (*unmarshalTextOnly) UnmarshalText([]byte) error { return nil }

// strictName is written as the string it is, and checked when read.
type strictName string

func (n *strictName) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty")
	}
	*n = strictName(b)
	return nil
}

// FuzzRoundTrip: every value the encoder accepts decodes back to the same value, with
// both decoders, for types of the fixed family (shape[0] < 64) and struct types built
// from shape by reflect.StructOf (at most 4096 of them, so that the per-type caches
// stay bounded while the fuzzer runs); values are made from data. CheckType accepts
// every one of these types.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0}, []byte("some bytes to make a value of"))
	f.Add([]byte{1}, []byte{})
	for i := range 8 {
		f.Add([]byte{200, byte(i * 37), byte(i)}, []byte("\x01\x02\x03\xff\xfe\x80 values"))
	}
	for i := range familyTypes {
		f.Add([]byte{byte(i)}, []byte(strings.Repeat("\x07\x01\xa0", 40)))
	}
	f.Fuzz(func(t *testing.T, shape, data []byte) {
		var typ reflect.Type
		switch {
		case len(shape) == 0:
			return
		case shape[0] < 64:
			typ = familyTypes[int(shape[0])%len(familyTypes)]
		default:
			seed := shapeSeed(shape[1:])
			if cached, ok := generatedTypes.Load(seed); ok {
				typ = cached.(reflect.Type)
			} else {
				typ = generated(shapeOf(seed))
				generatedTypes.Store(seed, typ)
			}
		}
		if err := CheckType(typ); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		v := reflect.New(typ).Elem()
		(&filler{b: data}).fill(v, 0)
		roundTrip(t, v)
	})
}

// generatedTypes caches FuzzRoundTrip's generated types by seed.
var generatedTypes sync.Map // uint32 -> reflect.Type

// shapeSeed takes 12 bits of key, so that the fuzzer meets at most 4096 generated types.
func shapeSeed(key []byte) uint32 {
	var seed uint32
	for i, c := range key[:min(len(key), 2)] {
		seed |= uint32(c) << (8 * i)
	}
	return seed & 0xfff
}

// shapeOf makes the bytes generated builds a type from out of a seed.
func shapeOf(seed uint32) []byte {
	x := seed | 0x1000
	out := make([]byte, 64)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x >> 7)
	}
	return out
}
