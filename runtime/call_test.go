package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// The specification's example exchange, byte for byte, from the host's point of view.
func TestSpecExample(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, nil)
			init := goInit(context.Background(), c, "")
			f.expect(`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`)
			f.send(`{"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}`)
			if r := recv(t, init); r.err != nil {
				t.Fatal(r.err)
			}

			inlet := goCall(context.Background(), c, "example.device.read", `{"probe":"inlet"}`)
			f.expect(`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`)
			f.send(`{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`)
			if r := recv(t, inlet); r.err != nil || string(r.v) != `{"celsius":21.5}` {
				t.Fatalf("inlet: %s, %v", r.v, r.err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			slow := goCall(ctx, c, "example.device.read", `{"probe":"slow"}`)
			f.expect(`{"type":"request","v":1,"id":3,"method":"example.device.read","params":{"probe":"slow"}}`)
			cancel()
			f.expect(`{"type":"cancel","v":1,"id":3}`)
			r := recv(t, slow)
			ce := checkOutcome(t, r.err, wire.CodeAborted, true, false)
			if ce.ID != 3 || !errors.Is(r.err, context.Canceled) {
				t.Errorf("slow: %v", r.err)
			}
			f.send(`{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`)
			eventually(t, "the reply to the cancelled call frees its slot", func() bool { return c.InFlight() == 0 })
			if c.Err() != nil {
				t.Fatalf("connection ended: %v", c.Err())
			}
		})
	}
}

// R33: identities start at 1 and increase strictly; local refusals use none (R41, R50,
// R58, A3, A22, A32).
func TestIdentities(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for i := 2; i < 6; i++ {
		_, err := c.Call(context.Background(), "example.device.unknown", nil) // R41
		checkOutcome(t, err, wire.CodeUnavailable, false, true)
		_, err = c.Call(expired, read, nil) // R50
		checkOutcome(t, err, wire.CodeDeadline, false, true)
		_, err = c.Call(context.Background(), read, json.RawMessage(`[1]`))
		checkOutcome(t, err, wire.CodeInvalid, false, true)
		res := goCall(context.Background(), c, read, "")
		f.expect(request(i, read, `{}`))
		f.send(resultFrame(i, itoa(i)))
		if r := recv(t, res); r.err != nil || string(r.v) != itoa(i) {
			t.Fatalf("call %d: %s, %v", i, r.v, r.err)
		}
	}
}

// R41, A22: a method not advertised is refused locally with unavailable "Unknown
// method", never started.
func TestUnknownMethod(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	for _, m := range []string{"example.device.erase", "system.adapter.initialize", "example.device", ""} {
		_, err := c.Call(context.Background(), m, nil)
		ce := checkOutcome(t, err, wire.CodeUnavailable, false, true)
		if ce.Message != proto.MessageUnknownMethod || !errors.Is(err, runtime.ErrUnknownMethod) || ce.ID != 0 {
			t.Errorf("%q: %v", m, err)
		}
	}
	if c.InFlight() != 0 || c.Err() != nil {
		t.Fatal("refusal touched the connection")
	}
}

// R50, A32: an expired deadline fails before dispatch.
func TestExpiredDeadline(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	_, err := c.Call(ctx, read, nil)
	ce := checkOutcome(t, err, wire.CodeDeadline, false, true)
	if ce.ID != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	_, err = c.Call(cctx, read, nil)
	checkOutcome(t, err, wire.CodeAborted, false, true)
	res := goCall(context.Background(), c, read, "")
	f.expect(request(2, read, `{}`))
	f.send(resultFrame(2, "null"))
	if r := recv(t, res); r.err != nil || string(r.v) != "null" {
		t.Fatalf("%s %v", r.v, r.err)
	}
}

// R28, R29, A21: each code is reported with its sentinel; unknown codes become failed,
// keep the raw code, and the connection continues.
func TestErrorCodes(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	tests := []struct {
		code string
		want wire.Code
	}{
		{"invalid", wire.CodeInvalid}, {"closed", wire.CodeClosed}, {"aborted", wire.CodeAborted},
		{"denied", wire.CodeDenied}, {"unavailable", wire.CodeUnavailable}, {"busy", wire.CodeBusy},
		{"failed", wire.CodeFailed}, {"deadline", wire.CodeDeadline},
		{"Busy", wire.CodeFailed}, {"teapot", wire.CodeFailed}, {"", wire.CodeFailed}, // R29
	}
	for i, tt := range tests {
		id := i + 2
		res := goCall(context.Background(), c, read, "")
		f.expect(request(id, read, `{}`))
		f.send(errorFrame(id, tt.code, "it went wrong"))
		r := recv(t, res)
		ce := checkOutcome(t, r.err, tt.want, false, false)
		if ce.RawCode != tt.code || ce.Message != "it went wrong" || ce.ID != uint64(id) || ce.Method != read || ce.Cause != nil {
			t.Errorf("code %q: %+v", tt.code, ce)
		}
		if code := runtime.CodeOf(fmt.Errorf("wrapped: %w", r.err)); code != ce.Code {
			t.Errorf("CodeOf: %s", code)
		}
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}

// R31, A20: a longer message is capped at 4096 bytes on a character boundary.
func TestMessageCapped(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	long := strings.Repeat("a", limits.MaxErrorMessage-1) + strings.Repeat("é", 10)
	res := goCall(context.Background(), c, read, "")
	f.expect(request(2, read, `{}`))
	f.send(errorFrame(2, "failed", long))
	ce := callError(t, recv(t, res).err)
	if len(ce.Message) > limits.MaxErrorMessage || !utf8.ValidString(ce.Message) || ce.Message != long[:limits.MaxErrorMessage-1] {
		t.Fatalf("message of %d bytes, valid UTF-8 %v", len(ce.Message), utf8.ValidString(ce.Message))
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

// R34: replies in any order are matched by identity.
func TestOutOfOrderReplies(t *testing.T) {
	c, f := newConn(t, osPipe, nil)
	f.handshake(c)
	var res [3]<-chan result
	for i := range res {
		res[i] = goCall(context.Background(), c, read, `{"n":`+itoa(i)+`}`)
	}
	// Callers race for identities: learn from the frames which caller got which.
	byID := map[int]int{}
	for range res {
		got := f.next()
		for id := 2; id <= 4; id++ {
			for i := range res {
				if got == request(id, read, `{"n":`+itoa(i)+`}`) {
					byID[id] = i
				}
			}
		}
	}
	if len(byID) != 3 || c.InFlight() != 3 {
		t.Fatalf("frames %v, in flight %d", byID, c.InFlight())
	}
	for _, id := range []int{4, 2, 3} {
		f.send(resultFrame(id, `{"n":`+itoa(byID[id])+`}`))
	}
	for i := range res {
		if r := recv(t, res[i]); r.err != nil || string(r.v) != `{"n":`+itoa(i)+`}` {
			t.Errorf("caller %d: %s, %v", i, r.v, r.err)
		}
	}
}

// R36, R39, A17, A18: a cancelled call keeps its identity and slot until the reply
// arrives; the reply is then dropped and the connection continues.
func TestCancelKeepsSlot(t *testing.T) {
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{MaxInFlight: 1}, FailFast: true})
	f.handshake(c)
	ctx, cancel := context.WithCancel(context.Background())
	res := goCall(ctx, c, read, "")
	f.expect(request(2, read, `{}`))
	cancel()
	f.expect(cancelFrame(2)) // R36: names the id already sent
	r := recv(t, res)
	checkOutcome(t, r.err, wire.CodeAborted, true, false)
	if c.InFlight() != 1 {
		t.Fatalf("in flight %d after cancel, want 1", c.InFlight())
	}
	_, err := c.Call(context.Background(), read, nil) // R39: the slot is still held
	checkOutcome(t, err, wire.CodeBusy, false, true)
	f.send(resultFrame(2, `"late"`)) // not an unknown reply: id 2 is still pending
	eventually(t, "slot released by the reply", func() bool { return c.InFlight() == 0 })
	res = goCall(context.Background(), c, read, "")
	f.expect(request(3, read, `{}`))
	f.send(resultFrame(3, `"ok"`))
	if r := recv(t, res); r.err != nil || string(r.v) != `"ok"` {
		t.Fatalf("%s %v", r.v, r.err)
	}
}

// R43, A17, A37: without a context deadline a call gets the standard deadline (shortened
// here), after which a cancel is sent and the identity stays pending.
func TestDefaultDeadline(t *testing.T) {
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{CallDeadline: 30 * time.Millisecond, MaxInFlight: 1}})
	f.handshake(c)
	res := goCall(context.Background(), c, read, "")
	f.expect(request(2, read, `{}`))
	r := recv(t, res)
	ce := checkOutcome(t, r.err, wire.CodeDeadline, true, false)
	if ce.ID != 2 || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("%v", r.err)
	}
	f.expect(cancelFrame(2))
	// A37: the deadline also covers waiting for a slot.
	_, err := c.Call(context.Background(), read, nil)
	checkOutcome(t, err, wire.CodeDeadline, false, true)
	f.send(errorFrame(2, "aborted", "Read canceled"))
	eventually(t, "slot released", func() bool { return c.InFlight() == 0 })
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

// R40, A16: at most 32 requests in flight; the 33rd waits for a slot within its
// deadline, or fails fast with busy.
func TestInFlightCap(t *testing.T) {
	for _, failFast := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait", true: "failfast"}[failFast], func(t *testing.T) {
			c, f := newConn(t, osPipe, &runtime.Options{FailFast: failFast})
			f.handshake(c)
			var res []<-chan result
			for range limits.MaxInFlight {
				res = append(res, goCall(context.Background(), c, read, ""))
			}
			for range limits.MaxInFlight {
				f.next()
			}
			if n := c.InFlight(); n != limits.MaxInFlight {
				t.Fatalf("in flight %d", n)
			}
			if failFast {
				_, err := c.Call(context.Background(), read, nil)
				checkOutcome(t, err, wire.CodeBusy, false, true)
			} else {
				// A caller that gives up while waiting for a slot never started.
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				_, err := c.Call(ctx, read, nil)
				cancel()
				checkOutcome(t, err, wire.CodeDeadline, false, true)
				ctx, cancel = context.WithCancel(context.Background())
				waiting := goCall(ctx, c, read, "")
				cancel()
				checkOutcome(t, recv(t, waiting).err, wire.CodeAborted, false, true)
				// The 33rd caller is sent once a reply frees a slot.
				extra := goCall(context.Background(), c, read, `{"n":33}`)
				f.send(resultFrame(2, "2"))
				f.expect(request(34, read, `{"n":33}`))
				f.send(resultFrame(34, "34"))
				if r := recv(t, extra); r.err != nil || string(r.v) != "34" {
					t.Fatalf("33rd: %s %v", r.v, r.err)
				}
			}
			for id := 3; id < 2+limits.MaxInFlight; id++ {
				f.send(resultFrame(id, "0"))
			}
			if failFast {
				f.send(resultFrame(2, "2"))
			}
			for _, ch := range res {
				if r := recv(t, ch); r.err != nil {
					t.Fatal(r.err)
				}
			}
		})
	}
}

// R58, A3: a request whose frame would exceed the limit is refused with invalid, uses no
// identity, and the connection continues; one exactly at the limit is sent.
func TestRequestTooLarge(t *testing.T) {
	const max = 256
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{MaxFrameSize: max}})
	f.handshake(c)
	// The payload of request(2, read, params) is len(request(2, read, "")) + len(params).
	fill := max - len(request(2, read, "")) - len(`{"p":""}`)
	atLimit := `{"p":"` + strings.Repeat("x", fill) + `"}`
	over := `{"p":"` + strings.Repeat("x", fill+1) + `"}`
	huge := `{"p":"` + strings.Repeat("x", 10*max) + `"}`
	for _, c2 := range []struct{ params, size string }{
		{over, "a frame of 257 bytes"},
		{huge, "params of " + strconv.Itoa(len(huge)) + " bytes"},
	} {
		_, err := c.Call(context.Background(), read, json.RawMessage(c2.params))
		ce := checkOutcome(t, err, wire.CodeInvalid, false, true)
		// The message names the request's size and the limit.
		want := "Request exceeds the adapter frame limit: " + c2.size + ", the limit is 256 bytes; use a paged or streamed service (registry.Upload sends an io.Reader in chunks, see contract.NewUpload)"
		if ce.Message != want || !errors.Is(err, runtime.ErrRequestTooLarge) || ce.ID != 0 {
			t.Errorf("%v\nwant message %q", err, want)
		}
	}
	res := goCall(context.Background(), c, read, atLimit)
	if got := f.next(); len(got) != max || got != request(2, read, atLimit) {
		t.Fatalf("frame of %d bytes, want %d", len(got), max)
	}
	f.send(resultFrame(2, "true"))
	if r := recv(t, res); r.err != nil {
		t.Fatal(r.err)
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

func TestCallErrorText(t *testing.T) {
	tests := []struct {
		err  *runtime.CallError
		want string
	}{
		{&runtime.CallError{Method: read, ID: 7, Code: wire.CodeUnavailable, RawCode: "unavailable", Message: "Unknown method"},
			"runtime: example.device.read (id 7): unavailable: Unknown method"},
		{&runtime.CallError{Method: read, ID: 8, Code: wire.CodeFailed, RawCode: "Busy", Message: "x"},
			`runtime: example.device.read (id 8): failed (sent as "Busy"): x`},
		{&runtime.CallError{Method: read, Code: wire.CodeUnavailable, Message: proto.MessageUnknownMethod, NeverStarted: true, Cause: runtime.ErrUnknownMethod},
			"runtime: example.device.read: unavailable: Unknown method [never started]: runtime: method not advertised by the adapter"},
		{&runtime.CallError{Method: read, ID: 9, Code: wire.CodeClosed, Uncertain: true, Cause: &wire.ViolationError{Kind: wire.UnknownReply}},
			"runtime: example.device.read (id 9): closed [outcome uncertain]: The adapter replied to an unknown request"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	if code := runtime.CodeOf(errors.New("plain")); code != "" {
		t.Error("CodeOf found a code in a plain error")
	}
	if runtime.CodeOf(tests[0].err) == wire.CodeBusy || runtime.IsUncertain(tests[0].err) || runtime.IsNeverStarted(tests[0].err) {
		t.Error("CallError reports an outcome it does not have")
	}
	if wire.Violation(0).String() == "" {
		t.Error("violation text")
	}
}

// Logging goes through the given hclog logger, under the connection's name.
func TestLogging(t *testing.T) {
	var buf safeBuffer
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: &buf, Name: "host"})
	c, f := newConn(t, ioPipe, &runtime.Options{Logger: logger, Name: "thermo"})
	f.handshake(c)
	ctx, cancel := context.WithCancel(context.Background())
	res := goCall(ctx, c, read, "")
	f.expect(request(2, read, `{}`))
	cancel()
	recv(t, res)
	f.expect(cancelFrame(2))
	f.send(resultFrame(2, "1"))
	eventually(t, "reply dropped", func() bool { return c.InFlight() == 0 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"host.thermo", "initialized", "request queued", "caller gave up", "abandoned call dropped", "connection ended"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A nil context is refused with a typed error, not a panic, and changes nothing.
func TestNilContext(t *testing.T) {
	var nilCtx context.Context
	c, f := newConn(t, ioPipe, nil)
	if _, err := c.Initialize(nilCtx, nil); !errors.Is(err, runtime.ErrNilContext) || !runtime.IsNeverStarted(err) {
		t.Fatalf("Initialize(nil) = %v", err)
	}
	f.handshake(c)
	if _, err := c.Call(nilCtx, read, nil); !errors.Is(err, runtime.ErrNilContext) || runtime.CodeOf(err) != wire.CodeInvalid || !runtime.IsNeverStarted(err) {
		t.Fatalf("Call(nil) = %v", err)
	}
	if c.Err() != nil || c.InFlight() != 0 {
		t.Fatalf("connection changed: %v, %d in flight", c.Err(), c.InFlight())
	}
}

// ContextError reports a call a layer above gave up before reaching a connection:
// never started, with the context's code (R50, A32).
func TestContextError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	for _, tt := range []struct {
		ctx  context.Context
		code wire.Code
	}{{cancelled, wire.CodeAborted}, {expired, wire.CodeDeadline}} {
		err := runtime.ContextError(tt.ctx, "a.b.c")
		if runtime.CodeOf(err) != tt.code || !runtime.IsNeverStarted(err) || runtime.IsUncertain(err) || err.ID != 0 {
			t.Errorf("ContextError = %v, want %v, never started", err, tt.code)
		}
	}
}
