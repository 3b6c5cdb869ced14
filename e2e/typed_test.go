package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/e2e/typedapi"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// sameEvent reports whether b is a: its times the same instants at the same offsets
// (the location's name is not sent), everything else reflect.DeepEqual.
func sameEvent(a, b typedapi.Event) bool {
	sameTime := func(x, y time.Time) bool {
		_, ox := x.Zone()
		_, oy := y.Zone()
		return x.Equal(y) && ox == oy
	}
	if !sameTime(a.At, b.At) || !sameTime(a.Seen, b.Seen) || (a.When == nil) != (b.When == nil) ||
		a.When != nil && !sameTime(*a.When, *b.When) {
		return false
	}
	a.At, b.At, a.Seen, b.Seen, a.When, b.When = time.Time{}, time.Time{}, time.Time{}, time.Time{}, nil, nil
	return reflect.DeepEqual(a, b)
}

// A contract made of time.Time, netip.Addr, a TextMarshaler enum, []byte, an embedded
// struct, time.Duration and any: every value goes host → adapter process → host and
// comes back exactly, the adapter sees the values a local call would give it, and a
// value its type refuses is answered invalid naming the field.
func TestTypedRoundTrip(t *testing.T) {
	bin := buildBinT(t, "typed")
	reg := registry.New(&registry.Config{Env: []string{"PATH=" + os.Getenv("PATH")}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := reg.Close(ctx); err != nil {
			t.Errorf("close not verified: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := reg.Open(ctx, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := registry.NewClient(h, typedapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 8, 7, 15, 123456789, time.FixedZone("NST", -(3*3600+30*60)))
	first := time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
	last := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 14*3600))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	cases := map[string]typedapi.Event{
		"zero": {},
		"full": {
			Origin: typedapi.Origin{Host: netip.MustParseAddr("2001:db8::1"), Seen: at.UTC()},
			At:     at, When: &last,
			Peer:  netip.MustParseAddr("192.0.2.7"),
			Peers: []netip.Addr{netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("::ffff:10.0.0.1"), {}},
			Level: typedapi.High, ByLevel: map[typedapi.Level]int64{typedapi.Low: math.MinInt64, typedapi.High: math.MaxInt64},
			ByAddr:  map[netip.Addr]string{netip.MustParseAddr("10.0.0.1"): "a", netip.MustParseAddr("::1"): "b"},
			Payload: all, Timeout: math.MaxInt64,
			Extra: map[string]any{"n": 1.5, "big": 9007199254740992.0, "l": []any{"x", true, nil, map[string]any{}, []any{}}},
			Seq:   math.MaxUint64,
		},
		"edges": {At: first, Origin: typedapi.Origin{Seen: last}, Timeout: -1, Payload: []byte{}, Peers: []netip.Addr{}, Extra: "text",
			ByLevel: map[typedapi.Level]int64{}, Level: typedapi.Mid},
	}
	for name, e := range cases {
		got, err := registry.Call(ctx, c, typedapi.EventMethod, e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameEvent(e, got) {
			t.Errorf("%s: sent\n%#v\ngot back\n%#v", name, e, got)
		}
	}
	// The adapter's own view of what it received: the values a local call gives.
	full := cases["full"]
	st, err := registry.Call(ctx, c, typedapi.StampMethod, full)
	want := typedapi.Stamp{Year: 2026, Offset: -(3*3600 + 30*60), Is4: true, Level: "high",
		Seconds: time.Duration(math.MaxInt64).Seconds(), Len: 256, Kind: "map[string]interface {}", Echo: math.MaxInt64}
	if err != nil || st != want {
		t.Fatalf("stamp: %+v, %v\nwant %+v", st, err, want)
	}
	// A value the type's own method refuses, or of the wrong JSON kind, is answered
	// invalid in one line naming the field.
	for params, msg := range map[string]string{
		`{"level":"max"}`:      `params: field "level": typedapi.Level refuses a string: unknown level "max"`,
		`{"at":"yesterday"}`:   `params: field "at": time.Time refuses a string: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
		`{"peer":7}`:           `params: field "peer": expected a string, got the number 7`,
		`{"host":"1.2.3"}`:     `params: field "host": netip.Addr refuses a string: ParseAddr("1.2.3"): IPv4 address too short`,
		`{"by_addr":{"x":""}}`: `params: field "by_addr[x]": netip.Addr refuses the key: ParseAddr("x"): unable to parse IP`,
	} {
		_, err := h.Call(ctx, "e2e.typed.event", json.RawMessage(params))
		var ce *runtime.CallError
		if !errors.As(err, &ce) || ce.Code != wire.CodeInvalid || ce.Message != msg {
			t.Errorf("%s: %v\nwant invalid %q", params, err, msg)
		}
	}
	// A value that does not encode (a level without a name) fails before it is sent.
	if _, err := registry.Call(ctx, c, typedapi.EventMethod, typedapi.Event{Level: 9}); !errors.Is(err, registry.ErrEncode) ||
		!runtime.IsNeverStarted(err) {
		t.Fatalf("unnamed level: %v, want an encode error, never started", err)
	}
}
