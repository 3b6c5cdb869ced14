package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// Params are decoded with mapstructure: json tags, exact keys, unknown keys refused
// with invalid, numbers exact.
func TestParamsDecoding(t *testing.T) {
	const empty = `{"name":"","count":0,"ratio":0,"tags":null,"inner":null,"any":null,"extras":null}`
	tests := []struct {
		name, method, params string
		want                 string // the result value, or "" for an invalid reply
		mentions             string // a word the invalid message must contain
	}{
		{"all fields", "test.svc.decode", `{"name":"a","count":3,"ratio":1.5,"tags":["x"],"inner":{"on":true},"any":2,"extras":{"k":1}}`,
			`{"name":"a","count":3,"ratio":1.5,"tags":["x"],"inner":{"on":true},"any":2,"extras":{"k":1}}`, ""},
		{"empty object", "test.svc.decode", `{}`, empty, ""},
		{"null leaves the zero value", "test.svc.decode", `{"name":null}`, empty, ""},
		{"integer beyond float precision", "test.svc.decode", `{"count":9007199254740993}`,
			`{"name":"","count":9007199254740993,"ratio":0,"tags":null,"inner":null,"any":null,"extras":null}`, ""},
		{"any takes a float64 like encoding/json", "test.svc.decode", `{"any":{"n":1.25}}`,
			`{"name":"","count":0,"ratio":0,"tags":null,"inner":null,"any":{"n":1.25},"extras":null}`, ""},
		{"unknown key", "test.svc.decode", `{"nope":1}`, "", "nope"},
		{"unknown nested key", "test.svc.decode", `{"inner":{"off":true}}`, "", "off"},
		{"keys match exactly", "test.svc.decode", `{"Name":"a"}`, "", "Name"},
		{"fraction into an integer", "test.svc.decode", `{"count":1.5}`, "", "count"},
		{"string into an integer", "test.svc.decode", `{"count":"3"}`, "", "count"},
		{"number into a string", "test.svc.decode", `{"name":5}`, "", "name"},
		{"string into a list", "test.svc.decode", `{"tags":"x"}`, "", "tags"},
		{"empty struct refuses keys", "test.svc.count", `{"x":1}`, "", "x"},
		{"map takes anything", "test.svc.map", `{"a":1,"b":[true,null],"c":{"d":"e"}}`, `{"a":1,"b":[true,null],"c":{"d":"e"}}`, ""},
		{"raw params unchanged", "test.svc.echo", "{ \"z\" : [1, 2] ,\"a\":\"\\u00e9\"}", "{ \"z\" : [1, 2] ,\"a\":\"\\u00e9\"}", ""},
	}
	h := serve(t, newFixture().adapter())
	h.initialize()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := h.call(tt.method, tt.params)
			if tt.want != "" {
				expectResult(t, m, h.nextID, tt.want)
				return
			}
			if m.Type != proto.TypeError || m.Code != wire.CodeInvalid || !strings.HasPrefix(m.Message, "params: ") || !strings.Contains(m.Message, tt.mentions) {
				t.Fatalf("got %s %q %q, want invalid params mentioning %q", m.Type, m.Code, m.Message, tt.mentions)
			}
		})
	}
}

type config struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Debug bool   `json:"debug,omitempty"`
}

// The configuration of initialize is decoded into Adapter.Configuration before
// OnInitialize runs; defaults survive; a bad configuration is refused with invalid.
func TestConfiguration(t *testing.T) {
	tests := []struct {
		name, configuration string
		onInit              func(context.Context) error
		want                config
		code                wire.Code // "" for success
		message             string
	}{
		{name: "defaults kept", configuration: `{"host":"h"}`, want: config{Host: "h", Port: 80}},
		{name: "all fields", configuration: `{"host":"h","port":8080,"debug":true}`, want: config{Host: "h", Port: 8080, Debug: true}},
		{name: "unknown key", configuration: `{"hots":"h"}`, code: wire.CodeInvalid, message: "Invalid configuration: "},
		{name: "wrong type", configuration: `{"port":"80"}`, code: wire.CodeInvalid, message: "Invalid configuration: "},
		{name: "OnInitialize coded error", configuration: `{}`, code: wire.CodeDenied, message: "no licence",
			onInit: func(context.Context) error { return plugin.Errorf(wire.CodeDenied, "no licence") }},
		{name: "OnInitialize plain error", configuration: `{}`, code: wire.CodeFailed, message: "initialize: device missing",
			onInit: func(context.Context) error { return errors.New("device missing") }},
		{name: "OnInitialize panic", configuration: `{}`, code: wire.CodeFailed, message: "handler panic: oops",
			onInit: func(context.Context) error { panic("oops") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config{Port: 80}
			var seen *config
			a := newFixture().adapter()
			a.Configuration = cfg
			a.OnInitialize = func(ctx context.Context) error {
				c := *cfg
				seen = &c
				if tt.onInit != nil {
					return tt.onInit(ctx)
				}
				return nil
			}
			h := serve(t, a)
			m := h.call(proto.MethodInitialize, `{"protocol":1,"configuration":`+tt.configuration+`}`)
			if tt.code == "" {
				if m.Type != proto.TypeResult || seen == nil || *seen != tt.want {
					t.Fatalf("reply %s %q %q, OnInitialize saw %+v, want %+v", m.Type, m.Code, m.Message, seen, tt.want)
				}
				return
			}
			if m.Type != proto.TypeError || m.Code != tt.code || !strings.HasPrefix(m.Message, tt.message) {
				t.Fatalf("reply %s %q %q, want %q %q", m.Type, m.Code, m.Message, tt.code, tt.message)
			}
			if tt.code == wire.CodeInvalid && seen != nil {
				t.Fatal("OnInitialize ran after a bad configuration")
			}
		})
	}
}

// R37 for initialize: the host may cancel it; OnInitialize sees the cancellation.
func TestCancelInitialize(t *testing.T) {
	a := newFixture().adapter()
	a.OnInitialize = func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	h := serve(t, a)
	id := h.request(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`)
	h.cancel(id)
	expectError(t, h.recv(), id, wire.CodeAborted, "initialize: context canceled")
}

// R18, R37: initialize runs on the goroutine that read it (a host sends nothing else
// before its result), yet a long OnInitialize does not stop the reading: a cancel of
// initialize, a host's disconnect and a request sent against R18 are read while it runs.
func TestLongInitializeStillReads(t *testing.T) {
	for _, tc := range []string{"cancel", "disconnect", "early request"} {
		t.Run(tc, func(t *testing.T) {
			a := newFixture().adapter()
			saw := make(chan error, 1)
			a.OnInitialize = func(ctx context.Context) error {
				<-ctx.Done()
				saw <- context.Cause(ctx)
				return ctx.Err()
			}
			h := serve(t, a)
			id := h.request(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`)
			switch tc {
			case "cancel":
				h.cancel(id)
				expectError(t, h.recv(), id, wire.CodeAborted, "initialize: context canceled")
			case "disconnect":
				if err := h.disconnect(); err != nil {
					t.Fatalf("Serve: %v", err)
				}
			case "early request":
				early := h.request("test.svc.echo", `{"i":1}`)
				if m := h.recv(); m.ID != early || m.Type != proto.TypeError || m.Code != wire.CodeInvalid {
					t.Fatalf("reply to a request during initialize: %+v", m)
				}
				h.cancel(id)
				expectError(t, h.recv(), id, wire.CodeAborted, "initialize: context canceled")
			}
			select {
			case err := <-saw:
				if err == nil {
					t.Fatal("OnInitialize's context ended without a cause")
				}
			case <-time.After(wait):
				t.Fatal("OnInitialize's context was not cancelled")
			}
		})
	}
}

// R15, R16, R34: under a mixed concurrent load every request gets exactly one reply,
// cancels get none, and nothing else is ever sent.
func TestExactlyOneReplyEach(t *testing.T) {
	f := newFixture()
	h := serve(t, f.adapter())
	h.initialize()
	want := map[uint64]bool{}
	var waits []uint64
	for i := range 200 {
		var id uint64
		switch i % 5 {
		case 0:
			id = h.request("test.svc.echo", `{"i":1}`)
		case 1:
			id = h.request("test.svc.fail", `{"mode":"plain","message":"x"}`)
		case 2:
			id = h.request("test.svc.none", `{}`)
		case 3:
			id = h.request("test.svc.decode", `{"bad":1}`)
		case 4:
			if len(waits) < 8 {
				id = h.request("test.svc.wait", `{}`)
				waits = append(waits, id)
			} else {
				h.cancel(waits[0])
				h.cancel(waits[0])
				waits = waits[1:]
				continue
			}
		}
		want[id] = true
	}
	for _, id := range waits {
		h.cancel(id)
	}
	got := map[uint64]int{}
	for range want {
		m := h.recv()
		got[m.ID]++
		if !want[m.ID] || got[m.ID] > 1 {
			t.Fatalf("unexpected reply for id %d (%d times)", m.ID, got[m.ID])
		}
	}
	if err := h.disconnect(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if n := len(h.frames); n != 0 {
		t.Fatalf("%d frames beyond one reply per request", n)
	}
}
