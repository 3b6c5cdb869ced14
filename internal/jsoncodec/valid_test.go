package jsoncodec

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

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

// WritesValid accepts a type only when no part of it can write bytes the codec did not
// escape itself: MarshalJSON anywhere (on the type or its pointer, json.RawMessage
// included) or an interface (which may hold one) refuses it.
func TestWritesValid(t *testing.T) {
	type withRaw struct{ R json.RawMessage }
	type withAny struct{ X any }
	type withTime struct{ T time.Time }
	type deep struct{ L []map[string]*withRaw }
	for _, tc := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[plainTree](), true},
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[map[string][]int](), true},
		{reflect.TypeFor[json.Number](), true},
		{reflect.TypeFor[withRaw](), false},
		{reflect.TypeFor[json.RawMessage](), false},
		{reflect.TypeFor[withAny](), false},
		{reflect.TypeFor[withTime](), false},
		{reflect.TypeFor[deep](), false},
		{reflect.TypeFor[outer](), false},
		{reflect.TypeFor[Stamped](), false},
	} {
		if got := WritesValid(tc.t); got != tc.want {
			t.Errorf("WritesValid(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

// FuzzWritesValid: what Append writes for a type WritesValid accepts is one valid JSON
// value of valid UTF-8 (what the connection would have checked), whatever bytes its
// strings hold.
func FuzzWritesValid(f *testing.F) {
	f.Add("plain", []byte{1, 2}, 1.5)
	f.Add("\xff\xfe\"\\\u2028\x00", []byte(nil), math.Inf(1))
	f.Fuzz(func(t *testing.T, s string, b []byte, x float64) {
		p := s + "\x7f"
		v := plainTree{S: s, B: b, M: map[string]string{s: s, "": p}, K: map[int]string{-1: s}, P: &p,
			A: [2]string{s, p}, F: x, Next: &plainTree{S: p}}
		if !WritesValid(reflect.TypeOf(v)) {
			t.Fatal("plainTree is not accepted")
		}
		out, err := Append(nil, v)
		if err != nil {
			return // NaN, ±Inf: refused, nothing is sent
		}
		if err := proto.ValidateValue(out); err != nil {
			t.Fatalf("Append(%q, %q, %v) wrote %q: %v", s, b, x, out, err)
		}
	})
}

// A type CheckType accepts has its decoder plan, encoder and validity verdict built by
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
	if _, ok := validCache.Load(rt); !ok {
		t.Error("no validity verdict after CheckType")
	}
}
