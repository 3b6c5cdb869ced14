package jsoncodec

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// decodable reports whether the decoder reads every type reachable from p.
func decodable(p *plan, seen map[*plan]bool) bool {
	if seen[p] {
		return true
	}
	seen[p] = true
	if !p.local || (p.elem != nil && !decodable(p.elem, seen)) {
		return false
	}
	for _, f := range p.fields {
		if !decodable(f.p, seen) {
			return false
		}
	}
	return true
}

func TestPlansAreDecodable(t *testing.T) {
	for _, typ := range targets {
		if !decodable(planFor(typ), map[*plan]bool{}) {
			t.Errorf("%v: not handled by the decoder", typ)
		}
	}
	// What CheckType refuses is not decoded either, and says why.
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ *Base }](),
		reflect.TypeFor[struct {
			X int
			B int `json:"X"`
		}](),
		reflect.TypeFor[error](),
		reflect.TypeFor[struct {
			//lint:ignore SA5008 CheckType must refuse this mapstructure option
			B Base `json:",squash"`
		}](),
	} {
		if planFor(typ).local {
			t.Errorf("%v: handled by the decoder, expected a refusal", typ)
		}
		err := DecodeValue([]byte(`{}`), reflect.New(typ).Interface(), RefuseUnknown)
		var e *Error
		if !errors.As(err, &e) || e.kind != kindUnsupported || err.Error() != CheckType(typ).Error() {
			t.Errorf("%v: %v, want CheckType's %v", typ, err, CheckType(typ))
		}
	}
}

// A field of a type the decoder cannot fill fails only when a member names it.
func TestUndecodableFieldOnlyWhenNamed(t *testing.T) {
	type config struct {
		Name  string    `json:"name"`
		Out   io.Writer `json:"out"`
		Ready chan bool `json:"ready"`
	}
	var c config
	if err := DecodeValue([]byte(`{"name":"x"}`), &c, RefuseUnknown); err != nil || c.Name != "x" {
		t.Fatalf("%v %+v", err, c)
	}
	for in, msg := range map[string]string{
		`{"out":{}}`:     `field "out": io.Writer cannot be received: only an empty interface can be filled`,
		`{"ready":true}`: `field "ready": chan bool cannot be sent`,
	} {
		err := DecodeValue([]byte(in), &c, RefuseUnknown)
		var e *Error
		if !errors.As(err, &e) || e.kind != kindUnsupported || err.Error() != msg {
			t.Errorf("%s: %v, want %s", in, err, msg)
		}
	}
	// null is no value: the field keeps what it has.
	if err := DecodeValue([]byte(`{"out":null}`), &c, RefuseUnknown); err != nil {
		t.Fatal(err)
	}
}

// Both paths, every case: the same value, or errors of the same kind.
func TestDecodeCases(t *testing.T) {
	s := "x"
	one := 1
	pone := &one
	cases := []struct {
		name string
		in   string
		want outer
		kind errKind
		msg  string
	}{
		{name: "empty", in: `{}`},
		{name: "fields", in: `{"id":7,"tags":{"a":-1},"i":-3,"U8":255,"f32":1.5,"f":0.1,"s":"h\u00e9\n","n":12.50,"ok":true,"named":"l","i64":-9223372036854775808,"u64":18446744073709551615}`,
			want: outer{Base: Base{ID: 7, Tags: map[string]int32{"a": -1}}, I: -3, U8: 255, F32: 1.5, F: 0.1, S: "hé\n", N: "12.50", Ok: true, Named: "l", I64: math.MinInt64, U64: math.MaxUint64}},
		{name: "nested", in: `{"p":{"a":1,"b":"x","c":[1,2]},"l":[{"a":-128}],"m":{"k":{"c":[]}},"pp":1,"bs":"AQI="}`,
			want: outer{P: &inner{A: 1, B: &s, C: []uint16{1, 2}}, L: []inner{{A: -128}}, M: map[string]*inner{"k": {C: []uint16{}}}, PP: &pone, Bs: []byte{1, 2}}},
		{name: "any", in: `{"x":{"a":[1,2.5,"s",null,true]}}`, want: outer{X: map[string]any{"a": []any{1.0, 2.5, "s", nil, true}}}},
		{name: "nulls", in: `{"p":null,"s":null,"x":null,"l":null}`},
		{name: "dash is a name", in: `{"-":4}`, want: outer{Dash: 4}},
		{name: "unknown", in: `{"warehouse":1}`, kind: kindUnknown, msg: `field "warehouse" is not known (known: id, tags, i, U8, f32, f, s, n, x, bs, p, l, m, ok, -, pp, named, i64, u64)`},
		{name: "unexported is unknown", in: `{"hidden":1}`, kind: kindUnknown},
		{name: "case matters", in: `{"ID":1}`, kind: kindUnknown},
		{name: "nested unknown", in: `{"p":{"z":1}}`, kind: kindUnknown, msg: `field "p.z" is not known (known: a, b, c)`},
		{name: "int range", in: `{"p":{"a":128}}`, kind: kindRange, msg: `field "p.a": 128 does not fit int8`},
		{name: "int64 range", in: `{"i64":9223372036854775808}`, kind: kindRange, msg: `field "i64": 9223372036854775808 does not fit int64`},
		{name: "uint negative", in: `{"u64":-1}`, kind: kindRange, msg: `field "u64": -1 does not fit uint64`},
		{name: "fraction", in: `{"i":1.5}`, kind: kindType, msg: `field "i": expected an integer, got the number 1.5`},
		{name: "exponent", in: `{"i":1e3}`, kind: kindType},
		{name: "float32 range", in: `{"f32":1e39}`, kind: kindRange},
		{name: "float range", in: `{"f":1e400}`, kind: kindRange},
		{name: "any range", in: `{"x":[1e400]}`, kind: kindRange},
		{name: "string for number", in: `{"i":"1"}`, kind: kindType, msg: `field "i": expected an integer, got a string`},
		{name: "number for string", in: `{"s":1}`, kind: kindType, msg: `field "s": expected a string, got the number 1`},
		{name: "string for json.Number", in: `{"n":"1"}`, kind: kindType},
		{name: "array for object", in: `{"p":[]}`, kind: kindType, msg: `field "p": expected an object, got an array`},
		{name: "slice element", in: `{"l":[{},{"a":"x"}]}`, kind: kindType, msg: `field "l[1].a": expected an integer, got a string`},
		{name: "map element", in: `{"tags":{"k":true}}`, kind: kindType, msg: `field "tags[k]": expected an integer, got true`},
		{name: "bad base64", in: `{"bs":"***"}`, kind: kindType},
		{name: "not an object", in: `[1]`, kind: kindType, msg: `expected an object, got an array`},
		{name: "duplicate", in: `{"i":1,"i":2}`, kind: kindDuplicate},
		{name: "syntax", in: `{"i":1`, kind: kindSyntax},
		{name: "trailing", in: `{} {}`, kind: kindSyntax},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"direct", "mapstructure"} {
				var got outer
				var err error
				if path == "direct" {
					if e := decodeFast([]byte(c.in), planFor(reflect.TypeFor[outer]()), reflect.ValueOf(&got).Elem(), RefuseUnknown); e != nil {
						err = e
					}
				} else {
					err = decodeRef([]byte(c.in), reflect.ValueOf(&got).Elem(), RefuseUnknown)
				}
				if c.kind == 0 {
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					if !reflect.DeepEqual(got, c.want) {
						t.Fatalf("%s: got %+v, want %+v", path, got, c.want)
					}
					continue
				}
				var de *Error
				if !errors.As(err, &de) || de.kind != c.kind || !errors.Is(err, ErrDecode) {
					t.Fatalf("%s: got %v, want a %v error", path, err, c.kind)
				}
				if c.msg != "" && err.Error() != c.msg {
					t.Errorf("%s: message %q, want %q", path, err.Error(), c.msg)
				}
				if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "jsoncodec.") {
					t.Errorf("%s: message %q is not one line free of Go type names", path, err)
				}
			}
		})
	}
}

func TestDecodeValue(t *testing.T) {
	var m map[string]int
	if err := DecodeValue([]byte(`{"a":1}`), &m, RefuseUnknown); err != nil || m["a"] != 1 {
		t.Fatalf("got %v, %v", m, err)
	}
	if err := DecodeValue([]byte(`{}`), m, RefuseUnknown); !errors.Is(err, ErrDecode) {
		t.Fatalf("a non-pointer target: %v", err)
	}
	var raw json.RawMessage
	if err := DecodeValue([]byte(` {"a": [1, 2]} `), &raw, RefuseUnknown); err != nil {
		t.Fatal(err)
	}
	var back map[string][]int
	if err := json.Unmarshal(raw, &back); err != nil || len(back["a"]) != 2 {
		t.Fatalf("raw message: %s, %v", raw, err)
	}
}

func TestAppend(t *testing.T) {
	b, err := Append([]byte("x"), map[string]any{"h": "<&>", "f": 0.1})
	if err != nil || string(b) != `x{"f":0.1,"h":"<&>"}` {
		t.Fatalf("got %s, %v", b, err)
	}
	if _, err := Append(nil, math.NaN()); err == nil {
		t.Fatal("NaN encoded")
	}
}

// Results on the host ignore members they do not know (forward compatibility within a
// service version); a member twice is still refused.
func TestIgnoreUnknown(t *testing.T) {
	for _, path := range []string{"direct", "mapstructure"} {
		var got inner
		in := []byte(`{"a":1,"new":{"x":[1,2]},"c":[3]}`)
		var err error
		if path == "direct" {
			if e := decodeFast(in, planFor(reflect.TypeFor[inner]()), reflect.ValueOf(&got).Elem(), IgnoreUnknown); e != nil {
				err = e
			}
		} else {
			err = decodeRef(in, reflect.ValueOf(&got).Elem(), IgnoreUnknown)
		}
		if err != nil || got.A != 1 || len(got.C) != 1 {
			t.Fatalf("%s: %+v, %v", path, got, err)
		}
		if err := DecodeValue([]byte(`{"new":1,"new":2}`), &got, IgnoreUnknown); !errors.Is(err, ErrDecode) {
			t.Fatalf("%s: duplicate unknown member: %v", path, err)
		}
	}
}

// decodeAliasing shares long plain strings with the text and copies the others.
func TestDecodeAliasing(t *testing.T) {
	long := strings.Repeat("x", aliasMin)
	data := []byte(`{"s":"` + long + `","n":"short"}`)
	var v struct {
		S string `json:"s"`
		N string `json:"n"`
	}
	if err := decodeAliasing(data, &v, RefuseUnknown); err != nil || v.S != long || v.N != "short" {
		t.Fatalf("%d bytes, %q, %v", len(v.S), v.N, err)
	}
	if unsafe.StringData(v.S) != &data[6] {
		t.Fatal("the long string was copied")
	}
	if unsafe.StringData(v.N) == &data[len(data)-7] {
		t.Fatal("the short string shares the text")
	}
}

// DecodeOwned does not check a string's contents again (the frame it decodes was
// checked whole by the envelope decoder): a text the envelope decoder would have refused
// (a string with invalid UTF-8) shows it, where decodeAliasing refuses. It still decodes
// escapes, and still refuses what is not the value's shape.
func TestDecodeValidOwnedSkipsStringChecks(t *testing.T) {
	type s struct {
		S string `json:"s"`
	}
	bad := []byte("{\"s\":\"a\xffb\"}")
	var v s
	if err := decodeAliasing(bad, &v, RefuseUnknown); err == nil {
		t.Fatal("decodeAliasing accepted invalid UTF-8")
	}
	v = s{}
	if err := DecodeOwned(bad, nil, &v, false); err != nil || v.S != "a\xffb" {
		t.Fatalf("DecodeOwned: %q, %v; want the bytes as they are", v.S, err)
	}
	v = s{}
	if err := DecodeOwned([]byte(`{"s":"q\"\\\u00e9"}`), nil, &v, false); err != nil || v.S != "q\"\\é" {
		t.Fatalf("escapes: %q, %v", v.S, err)
	}
	if err := DecodeOwned([]byte(`{"s":1}`), nil, &v, false); err == nil {
		t.Fatal("a number for a string field was accepted")
	}
	if err := DecodeOwned([]byte(`{"t":"x"}`), nil, &v, false); err == nil {
		t.Fatal("an unknown member was accepted under RefuseUnknown")
	}
}
