package jsoncodec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// Shapes the decoder reads as the encoder writes them: fixed-size arrays, byte slices of
// a named byte type, embedded structs (unexported, or named by a tag), embedded
// non-struct types, and types that decode themselves from mapstructure's tree.

type octet uint8

type Label string

type hiddenBase struct {
	Z int `json:"z"`
}

type tagged struct {
	Base `json:"base"`
	N    int `json:"n"`
}

type shapes struct {
	hiddenBase
	Label
	Pair  [2]int8      `json:"pair"`
	Grid  [2][2]string `json:"grid"`
	Octs  []octet      `json:"octs"`
	Tag   tagged       `json:"tag"`
	Trim  trimmed      `json:"trim"`
	PTrim *trimmed     `json:"ptrim"`
	Skip  string       `json:"-"`
}

// trimmed decodes itself from the tree mapstructure would hand it: a JSON string, its
// first three characters kept; anything else is refused.
type trimmed struct{ S string }

func (t *trimmed) UnmarshalMapstructure(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("not a string: %T", v)
	}
	t.S = s[:min(3, len(s))]
	return nil
}

func (t trimmed) MarshalJSON() ([]byte, error) { return json.Marshal(t.S) }

func TestDecodeShapes(t *testing.T) {
	full := shapes{hiddenBase: hiddenBase{Z: 4}, Label: "l", Pair: [2]int8{-1, 2}, Grid: [2][2]string{{"a", "b"}, {"c", ""}},
		Octs: []octet{0, 255}, Tag: tagged{Base: Base{ID: 9}, N: 1}, Trim: trimmed{"abc"}, PTrim: &trimmed{"xyz"}}
	if err := CheckType(reflect.TypeFor[shapes]()); err != nil {
		t.Fatal(err)
	}
	b, err := Append(nil, full)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":4,"Label":"l","pair":[-1,2],"grid":[["a","b"],["c",""]],"octs":"AP8=","tag":{"base":{"id":9,"tags":null},"n":1},"trim":"abc","ptrim":"xyz"}`
	if string(b) != want {
		t.Fatalf("encoded\n %s\nwant\n %s", b, want)
	}
	for _, c := range []struct {
		name, in string
		want     shapes
		kind     errKind
		msg      string
	}{
		{name: "round trip", in: want, want: full},
		{name: "short array zero-filled", in: `{"pair":[7]}`, want: shapes{Pair: [2]int8{7, 0}}},
		{name: "empty array", in: `{"pair":[]}`},
		{name: "long array", in: `{"pair":[1,2,3]}`, kind: kindType, msg: `field "pair": expected an array of at most 2 elements, got 3`},
		{name: "array element", in: `{"grid":[[],["a",1]]}`, kind: kindType, msg: `field "grid[1][1]": expected a string, got the number 1`},
		{name: "array element range", in: `{"pair":[0,128]}`, kind: kindRange, msg: `field "pair[1]": 128 does not fit int8`},
		{name: "array for object", in: `{"pair":{}}`, kind: kindType, msg: `field "pair": expected an array, got an object`},
		{name: "named bytes", in: `{"octs":"AQI="}`, want: shapes{Octs: []octet{1, 2}}},
		{name: "named bytes not base64", in: `{"octs":"*"}`, kind: kindType},
		{name: "tagged embedded is a member", in: `{"id":1}`, kind: kindUnknown},
		{name: "tree unmarshaler", in: `{"trim":"abcdef"}`, want: shapes{Trim: trimmed{"abc"}}},
		{name: "tree unmarshaler refuses", in: `{"trim":{"a":[1]}}`, kind: kindType, msg: `field "trim": jsoncodec.trimmed refuses an object: not a string: map[string]interface {}`},
		{name: "tree unmarshaler behind a pointer", in: `{"ptrim":"uvwxyz"}`, want: shapes{PTrim: &trimmed{"uvw"}}},
		{name: "unexported embedded field", in: `{"z":-3}`, want: shapes{hiddenBase: hiddenBase{Z: -3}}},
		{name: "a field tagged - is not a member", in: `{"-":"set"}`, kind: kindUnknown, msg: `field "-" is not known (known: z, Label, pair, grid, octs, tag, trim, ptrim)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got shapes
			err := DecodeValue([]byte(c.in), &got, RefuseUnknown)
			if c.kind != 0 || c.msg != "" {
				var e *Error
				if !errors.As(err, &e) || e.kind != c.kind || (c.msg != "" && err.Error() != c.msg) {
					t.Fatalf("got %v (%#v), want kind %v %s", err, e, c.kind, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// An array decodes into a fresh value: what the target held is not kept.
func TestDecodeArrayReplaces(t *testing.T) {
	v := [3]int{9, 9, 9}
	if err := DecodeValue([]byte(`[1]`), &v, RefuseUnknown); err != nil || v != [3]int{1, 0, 0} {
		t.Fatalf("%v %v", err, v)
	}
}
