package jsoncodec

import (
	"encoding/json"
	"errors"
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

// CheckType only checks: a type's decoder plan, encoder and validity verdict are built
// when a value of it is first decoded, encoded or lent, since a contract is declared at
// every start and a start calls few of its methods.
func TestCheckTypeBuildsOnFirstUse(t *testing.T) {
	type prepared struct {
		A string `json:"a"`
		B []int  `json:"b"`
	}
	rt := reflect.TypeFor[prepared]()
	if err := CheckType(rt); err != nil {
		t.Fatal(err)
	}
	_, planned := plans.Load(rt)
	_, encodes := encCache.Load(rt)
	_, judged := validCache.Load(rt)
	if planned || encodes || judged {
		t.Fatalf("built at the check: plan %v, encoder %v, verdict %v", planned, encodes, judged)
	}
	b, err := Append(nil, prepared{A: "x", B: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	var back prepared
	if err := DecodeValue(b, &back, RefuseUnknown); err != nil || back.A != "x" || len(back.B) != 1 {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if !WritesValid(rt) {
		t.Error("WritesValid: false for strings and ints")
	}
	_, planned = plans.Load(rt)
	_, encodes = encCache.Load(rt)
	_, judged = validCache.Load(rt)
	if !planned || !encodes || !judged {
		t.Errorf("after first use: plan %v, encoder %v, verdict %v", planned, encodes, judged)
	}
}

// CheckType remembers the types it accepted, not those it refused: a refusal is given
// again, with its reason, each time.
func TestCheckTypeRemembersAcceptedOnly(t *testing.T) {
	type bad struct {
		C chan int `json:"c"`
	}
	type good struct {
		A string `json:"a"`
	}
	for range 2 {
		var e *Error
		if err := CheckType(reflect.TypeFor[bad]()); !errors.As(err, &e) || e.Path != "c" {
			t.Fatalf("CheckType(bad) = %v", err)
		}
		if err := CheckType(reflect.TypeFor[good]()); err != nil {
			t.Fatalf("CheckType(good) = %v", err)
		}
	}
	if _, ok := accepted.Load(reflect.TypeFor[bad]()); ok {
		t.Error("a refused type is remembered as accepted")
	}
}
