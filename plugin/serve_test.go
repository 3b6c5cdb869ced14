package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// The specification's example exchange, byte for byte (R16, R19, R37, R38).
func TestSpecExampleExchange(t *testing.T) {
	h := serve(t, &plugin.Adapter{Services: []*plugin.Service{thermometer()}})
	steps := []struct{ send, want string }{
		{`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`,
			`{"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}`},
		{`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`,
			`{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`},
		{`{"type":"request","v":1,"id":3,"method":"example.device.read","params":{"probe":"slow"}}`, ``},
		{`{"type":"cancel","v":1,"id":3}`,
			`{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`},
	}
	for _, s := range steps {
		h.send(s.send)
		if s.want == "" {
			continue
		}
		if got := string(h.recvRaw()); got != s.want {
			t.Fatalf("after %s\n got %s\nwant %s", s.send, got, s.want)
		}
	}
	if err := h.disconnect(); err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
}

// errReader fails the test if Serve reads anything.
type errReader struct{ t *testing.T }

func (r errReader) Read([]byte) (int, error) {
	r.t.Error("Serve read its input before validating the catalog")
	return 0, io.EOF
}

// R19-R25: an invalid catalog is refused before anything is read or written.
func TestInvalidCatalogRefusedBeforeServing(t *testing.T) {
	svc := func(id string, version int, methods ...string) *plugin.Service {
		s := plugin.NewService(id, version)
		for _, m := range methods {
			plugin.Handle(s, m, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
		}
		return s
	}
	var notPointer struct{}
	tests := []struct {
		name     string
		adapter  plugin.Adapter
		rule     string // the catalog rule broken, "" for other definition mistakes
		services []*plugin.Service
	}{
		{name: "R20 service not dotted", rule: "R20", services: []*plugin.Service{svc("device", 1, "device.read")}},
		{name: "R20 empty segment", rule: "R20", services: []*plugin.Service{svc("example..device", 1, "example..device.read")}},
		{name: "R20 method not dotted", rule: "R20", services: []*plugin.Service{svc("example.device", 1, "read")}},
		{name: "R21 system service", rule: "R21", services: []*plugin.Service{svc("system.device", 1, "system.device.read")}},
		{name: "R21 systemd prefix", rule: "R21", services: []*plugin.Service{svc("systemd.unit", 1, "systemd.unit.start")}},
		{name: "R22 version 0", rule: "R22", services: []*plugin.Service{svc("example.device", 0, "example.device.read")}},
		{name: "R22 negative version", rule: "R22", services: []*plugin.Service{svc("example.device", -1, "example.device.read")}},
		{name: "R23 no methods", rule: "R23", services: []*plugin.Service{svc("example.device", 1)}},
		{name: "R24 other prefix", rule: "R24", services: []*plugin.Service{svc("example.device", 1, "example.other.read")}},
		{name: "R24 prefix without dot", rule: "R24", services: []*plugin.Service{svc("conf.echo", 1, "conf.echoX.read")}},
		{name: "R25 service twice", rule: "R25", services: []*plugin.Service{svc("example.device", 1, "example.device.read"), svc("example.device", 2, "example.device.write")}},
		{name: "R25 method twice", rule: "R25", services: []*plugin.Service{svc("example.device", 1, "example.device.read", "example.device.read")}},
		{name: "nil service", services: []*plugin.Service{nil}},
		{name: "nil handler", services: []*plugin.Service{func() *plugin.Service {
			s := plugin.NewService("example.device", 1)
			plugin.Handle[struct{}, struct{}](s, "example.device.read", nil)
			return s
		}()}},
		{name: "configuration not a pointer", adapter: plugin.Adapter{Configuration: notPointer}, services: []*plugin.Service{svc("example.device", 1, "example.device.read")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.adapter
			a.Services = tt.services
			var out bytes.Buffer
			err := a.Serve(context.Background(), errReader{t}, &out)
			if !errors.Is(err, plugin.ErrInvalidAdapter) {
				t.Fatalf("Serve returned %v, want ErrInvalidAdapter", err)
			}
			if out.Len() != 0 {
				t.Fatalf("Serve wrote %q", out.Bytes())
			}
			if tt.rule == "" {
				return
			}
			var ce *proto.CatalogError
			if !errors.As(err, &ce) || !errors.Is(err, proto.ErrInvalidCatalog) || ce.Rule != tt.rule {
				t.Fatalf("Serve returned %v, want a catalog error for %s", err, tt.rule)
			}
		})
	}
}

// R19: initialize is answered with the catalog of every service, in order.
func TestInitializeAnswersCatalog(t *testing.T) {
	f := newFixture()
	h := serve(t, f.adapter())
	m := h.call(proto.MethodInitialize, `{"protocol":1,"configuration":{"ignored":true}}`)
	if m.Type != proto.TypeResult {
		t.Fatalf("initialize answered %s %q", m.Code, m.Message)
	}
	c, err := proto.DecodeCatalog(m.Value)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Services) != 2 || c.Services[0].ID != "example.device" || c.Services[1].ID != "test.svc" || c.Services[1].Version != 1 {
		t.Fatalf("catalog %+v", c)
	}
	if got := c.Services[1].Methods; len(got) != 11 || got[0] != "test.svc.echo" {
		t.Fatalf("methods %v", got)
	}
}

// R27, A7: requests before a successful initialize, and any second initialize, are
// answered invalid; the adapter keeps serving.
func TestInitializeOrder(t *testing.T) {
	t.Run("R27 request before initialize", func(t *testing.T) {
		h := serve(t, newFixture().adapter())
		expectError(t, h.call("test.svc.echo", `{}`), 1, wire.CodeInvalid, "Adapter is not initialized")
		expectError(t, h.call("no.such.method", `{}`), 2, wire.CodeInvalid, "Adapter is not initialized")
		h.initialize()
		expectResult(t, h.call("test.svc.echo", `{"a":1}`), 4, `{"a":1}`)
	})
	t.Run("R27 request while initialize runs", func(t *testing.T) {
		release := make(chan struct{})
		a := newFixture().adapter()
		a.OnInitialize = func(ctx context.Context) error { <-release; return nil }
		h := serve(t, a)
		h.request(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`)
		expectError(t, h.call("test.svc.echo", `{}`), 2, wire.CodeInvalid, "Adapter is not initialized")
		close(release)
		if m := h.recv(); m.Type != proto.TypeResult || m.ID != 1 {
			t.Fatalf("initialize answered %s %q", m.Code, m.Message)
		}
		expectResult(t, h.call("test.svc.echo", `{}`), 3, `{}`)
	})
	t.Run("A7 second initialize", func(t *testing.T) {
		h := serve(t, newFixture().adapter())
		h.initialize()
		expectError(t, h.call(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`), 2, wire.CodeInvalid, "Adapter is already initialized")
		expectResult(t, h.call("test.svc.echo", `{}`), 3, `{}`)
	})
	t.Run("A7 initialize after a failed one", func(t *testing.T) {
		a := newFixture().adapter()
		a.OnInitialize = func(context.Context) error { return plugin.Errorf(wire.CodeDenied, "no licence") }
		h := serve(t, a)
		expectError(t, h.call(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`), 1, wire.CodeDenied, "no licence")
		expectError(t, h.call(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`), 2, wire.CodeInvalid, "Adapter is already initialized")
		expectError(t, h.call("test.svc.echo", `{}`), 3, wire.CodeInvalid, "Adapter is not initialized")
	})
	t.Run("R17 protocol other than 1", func(t *testing.T) {
		h := serve(t, newFixture().adapter())
		expectError(t, h.call(proto.MethodInitialize, `{"protocol":2,"configuration":{}}`), 1, wire.CodeInvalid, "Invalid initialize params: protocol is not 1")
	})
	t.Run("A33 configuration not an object", func(t *testing.T) {
		h := serve(t, newFixture().adapter())
		expectError(t, h.call(proto.MethodInitialize, `{"protocol":1,"configuration":null}`), 1, wire.CodeInvalid, "Invalid initialize params: configuration is not an object")
	})
}

// R42: a method the adapter does not serve gets unavailable "Unknown method".
func TestUnknownMethod(t *testing.T) {
	h := serve(t, newFixture().adapter())
	h.initialize()
	expectError(t, h.call("test.svc.nothing", `{}`), 2, wire.CodeUnavailable, proto.MessageUnknownMethod)
	expectError(t, h.call("other.svc.echo", `{}`), 3, wire.CodeUnavailable, proto.MessageUnknownMethod)
	expectResult(t, h.call("test.svc.echo", `{}`), 4, `{}`)
}

// R28, R30, R38 and panics: handler errors become error replies with valid codes and
// capped messages.
func TestHandlerErrors(t *testing.T) {
	long := strings.Repeat("m", limits.MaxErrorMessage+100)
	// A 3-byte character straddling the cap must not be cut in half.
	straddle := strings.Repeat("a", limits.MaxErrorMessage-1) + "€"
	tests := []struct {
		name, params string
		code         wire.Code
		message      string
	}{
		{"R28 code kept", `{"mode":"coded","code":"denied","message":"no"}`, wire.CodeDenied, "no"},
		{"R28 every code", `{"mode":"coded","code":"deadline","message":"late"}`, wire.CodeDeadline, "late"},
		{"R28 unknown code", `{"mode":"coded","code":"teapot","message":"short"}`, wire.CodeFailed, "short"},
		{"R28 code case", `{"mode":"coded","code":"Busy","message":"x"}`, wire.CodeFailed, "x"},
		{"R28 wrapped *Error", `{"mode":"wrapped","code":"busy","message":"later"}`, wire.CodeBusy, "later"},
		{"plain error failed", `{"mode":"plain","message":"disk on fire"}`, wire.CodeFailed, "disk on fire"},
		{"canceled aborted", `{"mode":"canceled"}`, wire.CodeAborted, "stopped: context canceled"},
		{"deadline", `{"mode":"deadline"}`, wire.CodeDeadline, "context deadline exceeded"},
		{"R30 long message capped", `{"mode":"coded","code":"failed","message":"` + long + `"}`, wire.CodeFailed, long[:limits.MaxErrorMessage]},
		{"R30 plain message capped", `{"mode":"plain","message":"` + long + `"}`, wire.CodeFailed, long[:limits.MaxErrorMessage]},
		{"R30 cut on a character boundary", `{"mode":"plain","message":"` + straddle + `"}`, wire.CodeFailed, straddle[:limits.MaxErrorMessage-1]},
		{"panic failed", `{"mode":"panic"}`, wire.CodeFailed, "handler panic: boom"},
		{"R16 Goexit still answered", `{"mode":"goexit"}`, wire.CodeFailed, "handler exited without returning"},
	}
	h := serve(t, newFixture().adapter())
	h.initialize()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := h.recvAfter("test.svc.fail", tt.params)
			if len(p) > limits.FrameHeaderSize+limits.MaxErrorMessage+100 {
				t.Fatalf("error frame of %d bytes", len(p))
			}
			m, err := proto.DecodeAdapterMessage(p)
			if err != nil {
				t.Fatal(err)
			}
			expectError(t, m, h.nextID, tt.code, tt.message)
		})
	}
	// The adapter survived the panic.
	expectResult(t, h.call("test.svc.echo", `{"still":"here"}`), h.nextID, `{"still":"here"}`)
}

// recvAfter sends a request and returns its raw reply.
func (h *host) recvAfter(method, params string) []byte {
	h.t.Helper()
	h.request(method, params)
	return h.recvRaw()
}

// Results the engine cannot send become failed replies, never broken frames.
func TestUnsendableResults(t *testing.T) {
	a := newFixture().adapter()
	a.Limits = &limits.Limits{MaxFrameSize: 64 << 10}
	h := serve(t, a)
	h.initialize()
	m := h.call("test.svc.badjson", `{}`)
	if m.Type != proto.TypeError || m.Code != wire.CodeFailed || !strings.Contains(m.Message, "not one JSON value") {
		t.Fatalf("invalid raw result: %+v", m)
	}
	if m = h.call("test.svc.unencodable", `{}`); m.Type != proto.TypeError || m.Code != wire.CodeFailed {
		t.Fatalf("unencodable result: %+v", m)
	}
	expectError(t, h.call("test.svc.large", `{"n":70000}`), h.nextID, wire.CodeFailed, "Result exceeds the adapter frame limit")
	m = h.call("test.svc.large", `{"n":60000}`)
	if m.Type != proto.TypeResult || len(m.Value) != 60002 {
		t.Fatalf("large result below the limit: %s, %d bytes", m.Type, len(m.Value))
	}
}

// R37, R38: cancel is advisory and gets no reply of its own; a cancelled handler answers
// once; cancels for unknown or finished ids, and malformed ones, are ignored.
func TestCancel(t *testing.T) {
	f := newFixture()
	h := serve(t, f.adapter())
	h.initialize()
	id := h.request("test.svc.wait", `{}`)
	<-f.started
	h.cancel(id)
	h.cancel(id) // twice (A18)
	expectError(t, h.recv(), id, wire.CodeAborted, "context canceled")
	if cause := <-f.causes; !errors.Is(cause, plugin.ErrCanceledByHost) || !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v, want ErrCanceledByHost", cause)
	}
	h.cancel(id)     // finished
	h.cancel(999999) // never sent
	h.send(`{"type":"cancel","v":1,"id":2,"extra":1}`)
	h.send(`{"type":"cancel","v":2,"id":2}`)
	h.send(`{"type":"cancel","v":1,"id":"2"}`)
	h.send(`{"type":"cancel","v":1}`)
	// A reply to any of those would have been queued before this one.
	expectResult(t, h.call("test.svc.echo", `{"n":1}`), id+1, `{"n":1}`)
	if err := h.disconnect(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// R40, A16, R38: the 33rd concurrent request is busy at once; a cancelled handler keeps
// its slot until it returns; the slot is free once its reply has been seen.
func TestInFlightLimit(t *testing.T) {
	f := newFixture()
	t.Cleanup(f.unblock)
	h := serve(t, f.adapter())
	h.initialize()
	first := h.nextID + 1
	for range limits.MaxInFlight {
		h.request("test.svc.stubborn", `{}`)
	}
	for range limits.MaxInFlight {
		<-f.started
	}
	expectError(t, h.call("test.svc.echo", `{}`), h.nextID, wire.CodeBusy, "Too many requests in flight")
	// Busy-refused requests do not count: still busy, not worse.
	expectError(t, h.call("test.svc.echo", `{}`), h.nextID, wire.CodeBusy, "Too many requests in flight")
	h.cancel(first) // the stubborn handler ignores it and keeps its slot
	expectError(t, h.call("test.svc.echo", `{}`), h.nextID, wire.CodeBusy, "Too many requests in flight")
	// An unknown method needs no slot.
	expectError(t, h.call("test.svc.none", `{}`), h.nextID, wire.CodeUnavailable, proto.MessageUnknownMethod)

	f.unblock()
	seen := map[uint64]bool{}
	for range limits.MaxInFlight {
		m := h.recv()
		expectResult(t, m, m.ID, `"released"`)
		if m.ID < first || m.ID >= first+limits.MaxInFlight || seen[m.ID] {
			t.Fatalf("unexpected reply id %d", m.ID)
		}
		seen[m.ID] = true
	}
	// Every slot has been freed before its reply was sent: 32 new requests run.
	for range limits.MaxInFlight {
		h.request("test.svc.wait", `{}`)
	}
	for range limits.MaxInFlight {
		<-f.started
	}
	expectError(t, h.call("test.svc.echo", `{}`), h.nextID, wire.CodeBusy, "Too many requests in flight")
}

// A16 with a lower limit, and initialize not counted.
func TestInFlightLimitLowered(t *testing.T) {
	f := newFixture()
	t.Cleanup(f.unblock)
	a := f.adapter()
	a.Limits = &limits.Limits{MaxInFlight: 2}
	h := serve(t, a)
	h.initialize()
	h.request("test.svc.stubborn", `{}`)
	h.request("test.svc.stubborn", `{}`)
	<-f.started
	<-f.started
	expectError(t, h.call("test.svc.count", `{}`), 4, wire.CodeBusy, "Too many requests in flight")
	f.unblock()
	h.recv()
	h.recv()
	expectResult(t, h.call("test.svc.count", `{}`), 5, `1`)
}

// R46: stdin is read while every slot is busy: many frames are accepted and answered.
func TestReadsWhileHandlersRun(t *testing.T) {
	f := newFixture()
	t.Cleanup(f.unblock)
	h := serve(t, f.adapter())
	h.initialize()
	for range limits.MaxInFlight {
		h.request("test.svc.wait", `{}`)
	}
	for range limits.MaxInFlight {
		<-f.started
	}
	// 2 MiB of requests: io.Pipe writes block until the adapter reads them.
	big := `{"pad":"` + strings.Repeat("p", 64<<10) + `"}`
	for range 32 {
		h.request("test.svc.echo", big)
		if m := h.recv(); m.Code != wire.CodeBusy {
			t.Fatalf("got %s %s, want busy", m.Type, m.Code)
		}
	}
	// A cancel still reaches a running handler.
	h.cancel(2)
	expectError(t, h.recv(), 2, wire.CodeAborted, "context canceled")
}

// A4, R12: a request with an unknown or malformed top-level field is answered invalid
// with its id and never executed; the connection continues.
func TestMalformedRequestNotExecuted(t *testing.T) {
	tests := []struct{ name, payload, message string }{
		{"A4 extra field", `{"type":"request","v":1,"id":%d,"method":"test.svc.count","params":{},"extra":true}`, `Invalid request envelope: unknown field (field "extra")`},
		{"A4 result field in a request", `{"type":"request","v":1,"id":%d,"method":"test.svc.count","params":{},"value":1}`, `Invalid request envelope: field not allowed in this type (field "value")`},
		{"A4 missing params", `{"type":"request","v":1,"id":%d,"method":"test.svc.count"}`, `Invalid request envelope: missing field (field "params")`},
		{"A4 params not an object", `{"type":"request","v":1,"id":%d,"method":"test.svc.count","params":[]}`, `Invalid request envelope: params is not an object (field "params")`},
		{"A5 v is 2", `{"type":"request","v":2,"id":%d,"method":"test.svc.count","params":{}}`, `Invalid request envelope: v is not 1 (field "v")`},
		{"A4 method not a string", `{"type":"request","v":1,"id":%d,"method":7,"params":{}}`, `Invalid request envelope: method is not a string (field "method")`},
		{"A4 duplicate field", `{"type":"request","v":1,"id":%d,"method":"test.svc.count","params":{},"params":{}}`, `Invalid request envelope: duplicate field (field "params")`},
	}
	f := newFixture()
	h := serve(t, f.adapter())
	h.initialize()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.nextID++
			h.send(strings.Replace(tt.payload, "%d", strconv.FormatUint(h.nextID, 10), 1))
			expectError(t, h.recv(), h.nextID, wire.CodeInvalid, tt.message)
		})
	}
	if n := f.executed.Load(); n != 0 {
		t.Fatalf("a malformed request was executed %d times", n)
	}
	expectResult(t, h.call("test.svc.count", `{}`), h.nextID, `1`)
}

// R1: a typed result whose long strings are written by reference (the strings of the
// params it echoes, which share the request's frame, and strings the handler built) is
// one frame whose length covers them all, and the host reads exactly the value encoded.
func TestLargeTypedResultSpliced(t *testing.T) {
	type blob struct {
		A string   `json:"a"`
		B []string `json:"b"`
		N int      `json:"n"`
	}
	s := plugin.NewService("test.svc", 1)
	plugin.Handle(s, "test.svc.blob", func(_ context.Context, p blob) (blob, error) {
		p.B = append(p.B, strings.Repeat("β", 40<<10), "short\n")
		p.N++
		return p, nil
	})
	h := serve(t, &plugin.Adapter{Services: []*plugin.Service{s}})
	h.initialize()
	a := strings.Repeat("a", 3<<20)
	for _, params := range []blob{
		{A: a, B: []string{strings.Repeat("b", 100<<10)}},
		{A: a[:1<<20] + `"quoted"`}, // escapes: copied into the frame
		{A: "small"},
	} {
		in, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		m := h.call("test.svc.blob", string(in))
		if m.Type != proto.TypeResult {
			t.Fatalf("got %s %s %s", m.Type, m.Code, m.Message)
		}
		var got blob
		if err := json.Unmarshal(m.Value, &got); err != nil {
			t.Fatal(err)
		}
		want := params
		want.B = append(want.B, strings.Repeat("β", 40<<10), "short\n")
		want.N++
		if got.A != want.A || !slices.Equal(got.B, want.B) || got.N != want.N {
			t.Fatalf("result differs from what the handler returned (%d bytes)", len(m.Value))
		}
	}
}

// A goroutine that served a request waits to read again, so sequential requests are
// served by a few goroutines, not one new goroutine each (whose small stack would grow,
// copied, on every request); concurrent requests beyond the spares still each get one;
// when the connection ends, the spares end with it (goleak, in TestMain).
func TestSequentialRequestsReuseGoroutines(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	svc := plugin.NewService("test.gor", 1)
	plugin.Handle(svc, "test.gor.where", func(context.Context, struct{}) (struct{}, error) {
		buf := make([]byte, 64)
		id, _, _ := strings.Cut(strings.TrimPrefix(string(buf[:runtime.Stack(buf, false)]), "goroutine "), " ")
		mu.Lock()
		seen[id] = true
		mu.Unlock()
		return struct{}{}, nil
	})
	h := serve(t, &plugin.Adapter{Services: []*plugin.Service{svc}})
	h.initialize()
	const calls = 200
	for range calls {
		if m := h.call("test.gor.where", `{}`); m.Type != proto.TypeResult {
			t.Fatalf("got %s %s %q", m.Type, m.Code, m.Message)
		}
	}
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	// Each request is read by the goroutine that then runs it; with spares waiting to
	// read, a handful of goroutines take turns. Without them there would be one per call.
	if n > 16 {
		t.Fatalf("%d sequential requests were served by %d goroutines, want a few", calls, n)
	}
	if err := h.disconnect(); err != nil {
		t.Fatal(err)
	}
}
