package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/examples/thermometer/device"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func exactValue() echoapi.Exact {
	n := int64(math.MinInt64 + 1)
	pn := &n
	var escapes strings.Builder
	for c := rune(0); c < 0x20; c++ {
		escapes.WriteRune(c)
	}
	escapes.WriteString("\"\\/\x7f<>&\u00e9")
	return echoapi.Exact{
		Inner:   echoapi.Inner{Name: "embedded", Count: math.MaxUint64},
		I64Max:  math.MaxInt64,
		I64Min:  math.MinInt64,
		U64Max:  math.MaxUint64,
		I32Min:  math.MinInt32,
		U32Max:  math.MaxUint32,
		I8Min:   math.MinInt8,
		U16Max:  math.MaxUint16,
		Beyond:  1<<53 + 1,
		Int:     -(1<<53 + 1),
		Tenth:   0.1,
		Max:     math.MaxFloat64,
		Tiny:    math.SmallestNonzeroFloat64,
		Third:   1.0 / 3,
		F32:     math.MaxFloat32,
		Number:  "123456789012345678901234567890.5e-7",
		Escapes: escapes.String(),
		Seps:    "a\u2028b\u2029c",
		Astral:  "\U0001F600\U00010348\U0010FFFF",
		Bytes:   []byte{0, 1, 0xfe, 0xff},
		Any:     map[string]any{"n": 1.5, "l": []any{true, nil, "s", -0.25}},
		Ptr:     &echoapi.Inner{Name: "ptr", Tags: map[string]int64{"min": math.MinInt64}},
		PtrPtr:  &pn,
		Map:     map[string]echoapi.Inner{"k\u2028": {Count: 1 << 63}, "": {Name: "empty key"}},
		Slice:   []echoapi.Inner{{Name: "a"}, {Tags: map[string]int64{"x": 1<<53 + 1}}},
		Matrix:  [][]uint64{{math.MaxUint64, 0}, {}},
		Empty:   []string{},
	}
}

// echoTyped opens the echo adapter and binds a client of its whole service.
func echoTyped(t *testing.T) (*registry.Handle, *registry.Client) {
	h, err := newRegistry(t, nil).Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	return h, c
}

// Exactness: a struct of values at every limit goes host -> adapter process
// -> host through the typed client and comes back reflect.DeepEqual.
func TestTypedCallIsExact(t *testing.T) {
	_, c := echoTyped(t)
	want := exactValue()
	got, err := registry.Call(ctxT(t), c, echoapi.EchoExact, want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the round trip changed the value:\n got %#v\nwant %#v", got, want)
	}
	for _, b := range []echoapi.Blob{{}, {S: strings.Repeat("\u2028é\"x", 1<<16)}, {S: strings.Repeat("plain é", 1<<17)}} {
		back, err := registry.Call(ctxT(t), c, echoapi.EchoBlob, b)
		if err != nil || back != b {
			t.Fatalf("blob of %d bytes: %d bytes back, %v", len(b.S), len(back.S), err)
		}
	}
}

// Large params are lent to the connection with their pooled buffer and large result
// strings are written by reference (no copy at either end): callers that make large
// calls at once, each of its own bytes, still get their own bytes back, while buffers
// go from the pool to one call's params and back after another's were written.
func TestConcurrentLargeTypedCalls(t *testing.T) {
	_, c := echoTyped(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				b := echoapi.Blob{S: strings.Repeat(string(rune('a'+g))+strconv.Itoa(i), 100<<10)}
				back, err := registry.Call(ctxT(t), c, echoapi.EchoBlob, b)
				if err == nil && back != b {
					err = fmt.Errorf("caller %d call %d: %d bytes back, not the %d sent", g, i, len(back.S), len(b.S))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type narrow struct {
	Seq int8 `json:"seq"`
}

// A result that does not fit is a one-line DecodeError naming the field; a result
// member the client does not know is ignored; a method outside the client's service is
// refused before anything is sent.
func TestTypedCallErrors(t *testing.T) {
	h, c := echoTyped(t)
	// The adapter's own service, described with narrower types by a careless host.
	careless := contract.NewService("example.echo", 1)
	wide := contract.NewMethod[echoapi.Record, narrow](careless, "record")
	cc, err := registry.NewClient(h, careless)
	if err != nil {
		t.Fatal(err)
	}
	_, err = registry.Call(ctxT(t), cc, wide, echoapi.Record{Seq: 300})
	var de *registry.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, codec.ErrDecode) {
		t.Fatalf("narrow result: %v", err)
	}
	if want := `registry: example.echo.record: result: field "seq": 300 does not fit int8`; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	// probe, unit and pad are not narrow's fields: ignored.
	if got, err := registry.Call(ctxT(t), cc, wide, echoapi.Record{Probe: "p", Seq: -5}); err != nil || got.Seq != -5 {
		t.Fatalf("unknown result members: %+v, %v", got, err)
	}

	// Params the adapter refuses: one line naming the field.
	strict := contract.NewService("example.echo", 1)
	sleepy := contract.NewMethod[map[string]any, echoapi.SleepParams](strict, "sleep")
	sc, err := registry.NewClient(h, strict)
	if err != nil {
		t.Fatal(err)
	}
	_, err = registry.Call(ctxT(t), sc, sleepy, map[string]any{"ms": 1, "warehouse": "w"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeInvalid || ce.Message != `params: field "warehouse" is not known (known: ms)` {
		t.Fatalf("unknown param: %v", err)
	}

	// A method outside the bound service is refused before sending; one of another
	// Service value with the same id and version is named as such.
	_, err = registry.Call(ctxT(t), c, wide, echoapi.Record{})
	if !errors.Is(err, registry.ErrNotInService) || !runtime.IsNeverStarted(err) ||
		!strings.Contains(err.Error(), "two distinct contract.Service values declared with the same id and version") {
		t.Fatalf("method of another contract: %v", err)
	}
	_, err = registry.Call(ctxT(t), c, device.Read, device.ReadParams{Probe: "inlet"})
	if !errors.Is(err, registry.ErrNotInService) || !runtime.IsNeverStarted(err) || runtime.CodeOf(err) != wire.CodeInvalid {
		t.Fatalf("method of another service: %v", err)
	}
	if raw, err := registry.Call(ctxT(t), c, echoapi.Echo, json.RawMessage(`{"a":1}`)); err != nil || string(raw) != `{"a":1}` {
		t.Fatalf("raw method inside the service: %s, %v", raw, err)
	}
}

// Raw params of a typed call stay the caller's: they are sent as they are and never
// handed to the buffer pool, so a later call does not encode its params into them.
func TestTypedRawParamsStayTheCallers(t *testing.T) {
	_, c := echoTyped(t)
	const want = `{"probe":"raw","seq":1,"unit":"none","pad":"................................................................"}`
	raw := json.RawMessage(want)
	for range 20 {
		if _, err := registry.Call(ctxT(t), c, echoapi.Echo, raw); err != nil {
			t.Fatal(err)
		}
		if _, err := registry.Call(ctxT(t), c, echoapi.EchoRecord, echoapi.Record{Probe: "typed", Seq: 2}); err != nil {
			t.Fatal(err)
		}
		if string(raw) != want {
			t.Fatalf("a later call wrote into the caller's raw params: %s", raw)
		}
	}
}
