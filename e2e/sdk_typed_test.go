package e2e

// The typed contract holds the same in every language: the example.echo service written
// with each SDK, and with the Go SDK, round-trips values at every limit through a typed
// client unchanged, and refuses the same bad params with the same words.

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// forEachEcho runs f as a subtest per echo adapter: the Go one and every SDK's.
func forEachEcho(t *testing.T, f func(t *testing.T, a sdkEcho)) {
	goEcho := sdkEcho{name: "echo", path: buildBinT(t, "examples/echo")}
	t.Run(goEcho.name, func(t *testing.T) { f(t, goEcho) })
	forEachSDK(t, f) // an SDK adapter this machine could not build is skipped, unless required
}

// exactParams is the params of the exactness case of the shared conformance vectors
// (testdata/conformance/echo.json): values at every limit, as the host sends them.
func exactParams(t *testing.T) echoapi.Exact {
	t.Helper()
	var doc struct {
		Cases []struct {
			Name string
			Send []string
		}
	}
	testkit.Vectors(t, "echo.json", &doc)
	for _, c := range doc.Cases {
		if strings.HasPrefix(c.Name, "exact: values at every limit") {
			var req struct{ Params json.RawMessage }
			if err := json.Unmarshal([]byte(c.Send[0]), &req); err != nil {
				t.Fatal(err)
			}
			var v echoapi.Exact
			if err := codec.DecodeValue(req.Params, &v, codec.RefuseUnknown); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("no exactness case in the conformance vectors")
	return echoapi.Exact{}
}

// A struct of values at every limit (int64 and uint64 limits, 2^53+1, the smallest
// subnormal, a number's literal, escapes, astral characters, base64 bytes, nil and empty
// slices and maps, nested pointers) goes host -> adapter -> host through the typed
// client and comes back reflect.DeepEqual, whatever the adapter's language.
func TestSDKTypedExact(t *testing.T) {
	want := exactParams(t)
	if want.Beyond != 1<<53+1 || want.U64Max != math.MaxUint64 || want.I64Min != math.MinInt64 || want.Number == "" {
		t.Fatalf("the exactness case lost its limits: %+v", want)
	}
	forEachEcho(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a)
		defer closeSDK(t, reg)
		c, err := registry.NewClient(h, echoapi.Service)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		got, err := registry.Call(ctx, c, echoapi.EchoExact, want)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the round trip changed the value:\n got %#v\nwant %#v", got, want)
		}
		// Number "0": an empty json.Number is written as 0, by Go as by the others.
		limits := echoapi.Exact{I64Max: math.MaxInt64, I64Min: math.MinInt64, U64Max: math.MaxUint64, Beyond: 1<<53 + 1, Int: -(1<<53 + 1), Number: "0"}
		if got, err := registry.Call(ctx, c, echoapi.EchoExact, limits); err != nil || !reflect.DeepEqual(got, limits) {
			t.Fatalf("64-bit limits and 2^53+1: got %+v, %v", got, err)
		}
		rec := echoapi.Record{Probe: "inlet", Seq: math.MinInt64, Unit: "C"}
		if got, err := registry.Call(ctx, c, echoapi.EchoRecord, rec); err != nil || got != rec {
			t.Fatalf("record: got %+v, %v", got, err)
		}
	})
}

// Bad params are answered invalid, naming the field, in the same words by every echo.
func TestSDKTypedRefusals(t *testing.T) {
	cases := []struct{ method, params, message string }{
		{"example.echo.record", `{"probe":7,"seq":1}`, `params: field "probe": expected a string, got the number 7`},
		{"example.echo.record", `{"probe":"p","seq":1,"warehouse":"w"}`, `params: field "warehouse" is not known (known: probe, seq, unit, pad)`},
		{"example.echo.record", `{"probe":"p","seq":1.5}`, `params: field "seq": expected an integer, got the number 1.5`},
		{"example.echo.record", `{"seq":9223372036854775808}`, `params: field "seq": 9223372036854775808 does not fit int64`},
		{"example.echo.sleep", `{"ms":"1"}`, `params: field "ms": expected an integer, got a string`},
		{"example.echo.exact", `{"slice":[{},{"count":-1}]}`, `params: field "slice[1].count": -1 does not fit uint64`},
	}
	forEachEcho(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a)
		defer closeSDK(t, reg)
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		for _, tc := range cases {
			_, err := h.Call(ctx, tc.method, json.RawMessage(tc.params))
			var ce *runtime.CallError
			if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeInvalid || ce.Message != tc.message {
				t.Errorf("%s %s: %v\nwant invalid %q", tc.method, tc.params, err, tc.message)
			}
		}
	})
}
