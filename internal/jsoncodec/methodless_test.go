package jsoncodec

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

type (
	namedSlice []int
	namedPtr   *int
	withEmbed  struct{ time.Time }
	plainInts  []int64
)

func (namedSlice) MarshalJSON() ([]byte, error) { return []byte("[]"), nil }

// methodless never says "no methods" of a type that, or whose pointer, has one: the
// checks it spares would then miss a marshaler. Checked against reflect for every
// type here; the table says which ones it is expected to spare.
func TestMethodless(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{int64(0), true},
		{"", true},
		{false, true},
		{[]byte(nil), true},
		{[][]uint64(nil), true},
		{map[string]int64(nil), true},
		{[4]string{}, true},
		{(*int64)(nil), true},
		{(**int64)(nil), true},
		{(*[]string)(nil), true},
		{(**time.Time)(nil), true},
		{func() {}, true},
		{plainInts(nil), false}, // declared in a package: asked
		{namedSlice(nil), false},
		{namedPtr(nil), false},
		{time.Time{}, false},
		{(*time.Time)(nil), false},
		{netip.Addr{}, false},
		{json.RawMessage(nil), false},
		{json.Number(""), false},
		{struct{ A int }{}, false}, // an unnamed struct may embed methods
		{withEmbed{}, false},
		{struct{ time.Time }{}, false},
		{(*struct{ time.Time })(nil), false},
	} {
		rt := reflect.TypeOf(tc.v)
		got := methodless(rt)
		if got != tc.want {
			t.Errorf("methodless(%v) = %v, want %v", rt, got, tc.want)
		}
		if got && (rt.NumMethod() > 0 || reflect.PointerTo(rt).NumMethod() > 0) {
			t.Errorf("methodless(%v), but it or its pointer has %d and %d methods", rt, rt.NumMethod(), reflect.PointerTo(rt).NumMethod())
		}
	}
}
