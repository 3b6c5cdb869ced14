package jsoncodec

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
)

// color encodes itself as text, and refuses an unknown value.
type color int

func (c color) MarshalText() ([]byte, error) {
	if c == 1 {
		return []byte("red"), nil
	}
	return nil, fmt.Errorf("unknown color %d", int(c))
}

func (c *color) UnmarshalText(b []byte) error {
	if string(b) != "red" {
		return fmt.Errorf("unknown color %q", b)
	}
	*c = 1
	return nil
}

// stamp encodes itself as JSON, and refuses a negative value.
type stamp int

func (s stamp) MarshalJSON() ([]byte, error) {
	if s < 0 {
		return nil, errors.New("negative stamp")
	}
	return json.Marshal(int(s))
}

func (s *stamp) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*int)(s)) }

// An encoding error names the field as a decoding error does: member names joined with
// dots, indexes and map keys in brackets; the cause stays reachable with errors.As.
func TestEncodeErrorNamesTheField(t *testing.T) {
	type inner struct {
		Color color `json:"color"`
	}
	type outer struct {
		Inner  inner            `json:"inner"`
		Items  []inner          `json:"items"`
		Labels map[string]color `json:"labels"`
		Keys   map[color]int    `json:"keys"`
		Stamps [2]stamp         `json:"stamps"`
		Ptr    *inner           `json:"ptr"`
		Any    any              `json:"any"`
		Ratio  float64          `json:"ratio"`
	}
	ok := outer{Inner: inner{1}}
	for _, c := range []struct {
		name string
		v    outer
		want string
	}{
		{"member", outer{}, `codec: field "inner.color": json: error calling MarshalText for type jsoncodec.color: unknown color 0`},
		{"slice element", func() outer { o := ok; o.Items = []inner{{1}, {2}}; return o }(), `codec: field "items[1].color": json: error calling MarshalText for type jsoncodec.color: unknown color 2`},
		{"map value", func() outer { o := ok; o.Labels = map[string]color{"site": 3}; return o }(), `codec: field "labels[site]": json: error calling MarshalText for type jsoncodec.color: unknown color 3`},
		{"map key", func() outer { o := ok; o.Keys = map[color]int{4: 1}; return o }(), `codec: field "keys", a map key: json: error calling MarshalText for type jsoncodec.color: unknown color 4`},
		{"MarshalJSON in an array", func() outer { o := ok; o.Stamps[1] = -1; return o }(), `codec: field "stamps[1]": json: error calling MarshalJSON for type jsoncodec.stamp: negative stamp`},
		{"through a pointer", func() outer { o := ok; o.Ptr = &inner{5}; return o }(), `codec: field "ptr.color": json: error calling MarshalText for type jsoncodec.color: unknown color 5`},
		{"through an interface", func() outer { o := ok; o.Any = map[string]any{"deep": []any{inner{6}}}; return o }(), `codec: field "any[deep][0].color": json: error calling MarshalText for type jsoncodec.color: unknown color 6`},
		{"NaN", func() outer { o := ok; o.Ratio = math.NaN(); return o }(), `codec: field "ratio": json: unsupported value: NaN`},
	} {
		_, err := Append(nil, c.v)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: Append: %v\nwant %s", c.name, err, c.want)
		}
	}
	_, err := Append(nil, outer{Inner: inner{1}, Stamps: [2]stamp{-1}})
	var me *json.MarshalerError
	if !errors.As(err, &me) {
		t.Errorf("Append: %v: the *json.MarshalerError is not reachable", err)
	}
	_, err = Append(nil, outer{Inner: inner{1}, Ratio: math.Inf(-1)})
	var uve *json.UnsupportedValueError
	if !errors.As(err, &uve) || err.Error() != `codec: field "ratio": json: unsupported value: -Inf` {
		t.Errorf("Append(-Inf): %v: want the field named and the *json.UnsupportedValueError reachable", err)
	}
	if _, err := Append(nil, color(9)); err == nil || err.Error() != "codec: json: error calling MarshalText for type jsoncodec.color: unknown color 9" {
		t.Errorf("Append(color(9)): %v: the value itself has no field to name", err)
	}
}
