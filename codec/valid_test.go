package codec

import (
	"math"
	"reflect"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// plainTree is made of the codec's own writers only: strings, bytes, numbers, maps,
// pointers, arrays, a TextMarshaler (time.Time writes itself with MarshalJSON: not here)
// and a recursive pointer.
type plainTree struct {
	S    string            `json:"s"`
	B    []byte            `json:"b"`
	M    map[string]string `json:"m"`
	K    map[int]string    `json:"k"`
	P    *string           `json:"p"`
	A    [2]string         `json:"a"`
	F    float64           `json:"f"`
	Next *plainTree        `json:"next,omitempty"`
}

// FuzzAppendValid: what Append writes for a type made of the codec's own writers is one
// valid JSON value of valid UTF-8, whatever bytes its strings hold: invalid UTF-8 is
// replaced and everything JSON requires is escaped.
func FuzzAppendValid(f *testing.F) {
	f.Add("plain", []byte{1, 2}, 1.5)
	f.Add("\xff\xfe\"\\\u2028\x00", []byte(nil), math.Inf(1))
	f.Fuzz(func(t *testing.T, s string, b []byte, x float64) {
		p := s + "\x7f"
		v := plainTree{S: s, B: b, M: map[string]string{s: s, "": p}, K: map[int]string{-1: s}, P: &p,
			A: [2]string{s, p}, F: x, Next: &plainTree{S: p}}
		out, err := Append(nil, v)
		if err != nil {
			return // NaN, ±Inf: refused, nothing is sent
		}
		if err := proto.ValidateValue(out); err != nil {
			t.Fatalf("Append(%q, %q, %v) wrote %q: %v", s, b, x, out, err)
		}
	})
}

// A type CheckType accepts has its decoder plan and encoder built by
// the check, so that a contract's first call does not build them.
func TestCheckTypePrepares(t *testing.T) {
	type prepared struct {
		A string `json:"a"`
		B []int  `json:"b"`
	}
	rt := reflect.TypeFor[prepared]()
	if err := CheckType(rt); err != nil {
		t.Fatal(err)
	}
	if _, ok := plans.Load(rt); !ok {
		t.Error("no decoder plan after CheckType")
	}
	if _, ok := encCache.Load(rt); !ok {
		t.Error("no encoder after CheckType")
	}
}
