package runtime_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// pendingCalls starts n calls and waits until the fake has read all their frames.
func pendingCalls(t *testing.T, c *runtime.Conn, f *fake, n int) []<-chan result {
	t.Helper()
	var res []<-chan result
	for range n {
		res = append(res, goCall(context.Background(), c, read, ""))
	}
	for range n {
		f.next()
	}
	return res
}

// checkViolation checks that the connection ended with the violation kind and that every
// pending call failed exactly once with closed, uncertain, and the violation as cause
// (R51).
func checkViolation(t *testing.T, c *runtime.Conn, res []<-chan result, kind wire.Violation, sentinel error) *wire.ViolationError {
	t.Helper()
	cause := ended(t, c)
	var v *wire.ViolationError
	if !errors.As(cause, &v) || v.Kind != kind || !errors.Is(cause, sentinel) {
		t.Fatalf("cause %v, want %q", cause, kind)
	}
	if !strings.HasPrefix(cause.Error(), kind.String()) {
		t.Errorf("cause text %q does not start with %q", cause.Error(), kind.String())
	}
	for _, ch := range res {
		r := recv(t, ch)
		checkOutcome(t, r.err, wire.CodeClosed, true, false)
		if !errors.Is(r.err, sentinel) || callError(t, r.err).Cause != cause {
			t.Errorf("pending call: %v, want cause %v", r.err, cause)
		}
		select {
		case r := <-ch:
			t.Errorf("second outcome %v", r)
		default:
		}
	}
	if c.InFlight() != 0 {
		t.Errorf("in flight %d after the end", c.InFlight())
	}
	_, err := c.Call(context.Background(), read, nil)
	checkOutcome(t, err, wire.CodeClosed, false, true)
	if !errors.Is(err, sentinel) {
		t.Errorf("call after the end: %v", err)
	}
	return v
}

// The violations' texts are the specification's.
func TestViolationText(t *testing.T) {
	want := map[wire.Violation]string{
		wire.ProcessExited:   "The adapter process exited",
		wire.Output:          "The adapter output ended or violated the protocol",
		wire.InvalidResponse: "The adapter sent an invalid response",
		wire.UnknownReply:    "The adapter replied to an unknown request",
		wire.InputPipe:       "The adapter input pipe failed or stalled",
		wire.IDExhausted:     "Adapter request identity space exhausted",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d: %q, want %q", k, k.String(), s)
		}
	}
	exit := errors.New("exit status 3")
	err := error(&wire.ViolationError{Kind: wire.ProcessExited, Err: exit})
	if !errors.Is(err, wire.ProcessExited) || !errors.Is(err, exit) || errors.Is(err, wire.Output) {
		t.Errorf("%v", err)
	}
	if err.Error() != "The adapter process exited: exit status 3" {
		t.Errorf("%q", err.Error())
	}
}

// R53, R4, R5: bad framing or anything else on stdout is an Output violation.
func TestOutputViolation(t *testing.T) {
	oversized := make([]byte, 4)
	binary.BigEndian.PutUint32(oversized, limits.MaxFrameSize+1)
	tests := []struct {
		name   string
		bytes  []byte
		close  bool
		detail error
	}{
		{"stray print", []byte("hello from the adapter\n"), false, proto.ErrFrameTooLarge},
		{"zero-length frame", []byte{0, 0, 0, 0}, false, proto.ErrFrameEmpty},
		{"oversized length", oversized, false, proto.ErrFrameTooLarge},
		{"maximum length", []byte{0xff, 0xff, 0xff, 0xff}, false, proto.ErrFrameTooLarge},
		{"truncated header", []byte{0, 0}, true, proto.ErrFrameTruncated},
		{"truncated payload", append([]byte{0, 0, 0, 10}, `{"ty`...), true, proto.ErrFrameTruncated},
		{"end of output", nil, true, io.EOF}, // R52
	}
	for _, tt := range tests {
		for _, kind := range pipeKinds {
			t.Run(tt.name+"/"+string(kind), func(t *testing.T) {
				c, f := newConn(t, kind, nil)
				f.handshake(c)
				res := pendingCalls(t, c, f, 2)
				f.sendRaw(tt.bytes)
				if tt.close {
					_ = f.out.Close()
				}
				v := checkViolation(t, c, res, wire.Output, wire.Output)
				if !errors.Is(v, tt.detail) {
					t.Errorf("detail %v, want %v", v.Err, tt.detail)
				}
				if err := f.eof(); err != io.EOF {
					t.Errorf("adapter stdin: %v, want EOF", err)
				}
			})
		}
	}
}

// R52, A26: OnPeerGone decides the cause of a clean end of output, called once.
func TestOnPeerGoneOutputEnd(t *testing.T) {
	exit := errors.New("exit status 2")
	for _, ret := range []error{&wire.ViolationError{Kind: wire.ProcessExited, Err: exit}, nil} {
		var calls atomic.Int32
		c, f := newConn(t, ioPipe, &runtime.Options{OnPeerGone: func() error {
			calls.Add(1)
			if ret == nil {
				return nil
			}
			return ret
		}})
		f.handshake(c)
		res := pendingCalls(t, c, f, 1)
		_ = f.out.Close()
		if ret != nil {
			checkViolation(t, c, res, wire.ProcessExited, wire.ProcessExited)
			if !errors.Is(c.Err(), exit) {
				t.Errorf("cause %v does not carry the exit status", c.Err())
			}
		} else {
			v := checkViolation(t, c, res, wire.Output, wire.Output)
			if !errors.Is(v, io.EOF) {
				t.Errorf("%v", v)
			}
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("OnPeerGone called %d times", n)
		}
	}
	// Not called when the host closed first.
	var calls atomic.Int32
	c, _ := newConn(t, osPipe, &runtime.Options{OnPeerGone: func() error { calls.Add(1); return nil }})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Error("OnPeerGone called after Close")
	}
}

// R56, R52: a write that fails because the adapter's input is gone (not a stall) asks
// OnPeerGone for the cause, so a crash is reported as the process exit, not its symptom.
func TestOnPeerGoneBrokenInput(t *testing.T) {
	exit := &wire.ViolationError{Kind: wire.ProcessExited, Err: errors.New("exit status 9")}
	for _, ret := range []error{exit, nil} {
		c, f := newConn(t, osPipe, &runtime.Options{OnPeerGone: func() error { return ret }})
		f.handshake(c)
		_ = f.inEnd.Close() // the adapter's stdin is gone: the next write fails with EPIPE
		_, err := c.Call(context.Background(), read, nil)
		want := wire.InputPipe
		if ret != nil {
			want = wire.ProcessExited
		}
		if runtime.CodeOf(err) != wire.CodeClosed || !errors.Is(err, want) || !errors.Is(ended(t, c), want) {
			t.Fatalf("hook returned %v: err = %v, cause = %v", ret, err, c.Err())
		}
	}
}

// R56, R52: a call made while a failed write is ending the connection (OnPeerGone still
// deciding the cause) is never started and names that cause, as a request queued a
// moment earlier is told, so that a layer above can make it again on a restarted
// adapter; a caller whose context ends meanwhile gets its own context's error.
func TestCallWhileFailedWriteEnds(t *testing.T) {
	exit := &wire.ViolationError{Kind: wire.ProcessExited, Err: errors.New("exit status 9")}
	asked, release := make(chan struct{}), make(chan struct{})
	c, f := newConn(t, osPipe, &runtime.Options{OnPeerGone: func() error {
		close(asked)
		<-release
		return exit
	}})
	f.handshake(c)
	_ = f.inEnd.Close() // the adapter's stdin is gone: the next write fails with EPIPE
	first := goCall(context.Background(), c, read, "")
	recv(t, asked)

	dctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err := c.Call(dctx, read, nil)
	cancel()
	checkOutcome(t, err, wire.CodeDeadline, false, true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call whose deadline passed while the connection ended: %v", err)
	}

	late := goCall(context.Background(), c, read, "")
	close(release)
	r := recv(t, late)
	checkOutcome(t, r.err, wire.CodeClosed, false, true)
	if !errors.Is(r.err, wire.ProcessExited) {
		t.Errorf("call made while the connection ended: %v, want the process exit as its cause", r.err)
	}
	if r := recv(t, first); runtime.CodeOf(r.err) != wire.CodeClosed || !errors.Is(r.err, wire.ProcessExited) {
		t.Errorf("call whose write failed: %v", r.err)
	}
}

// R54: every envelope defect is an InvalidResponse violation.
func TestInvalidResponse(t *testing.T) {
	tests := []struct{ name, payload string }{
		{"not JSON", `hello`},
		{"array", `[1,2]`},
		{"string", `"result"`},
		{"two objects", `{"type":"result","v":1,"id":2,"value":1}{}`},
		{"invalid UTF-8", "{\"type\":\"result\",\"v\":1,\"id\":2,\"value\":\"\xff\"}"},
		{"no type", `{"v":1,"id":2,"value":1}`},
		{"unknown type", `{"type":"event","v":1,"id":2,"value":1}`},
		{"request from the adapter", `{"type":"request","v":1,"id":2,"method":"a.b","params":{}}`},
		{"cancel from the adapter", `{"type":"cancel","v":1,"id":2}`},
		{"unknown field", `{"type":"result","v":1,"id":2,"value":1,"extra":true}`},
		{"field of another type", `{"type":"result","v":1,"id":2,"value":1,"code":"failed"}`},
		{"duplicate field", `{"type":"result","v":1,"id":2,"value":1,"value":2}`},
		{"missing value", `{"type":"result","v":1,"id":2}`},
		{"missing message", `{"type":"error","v":1,"id":2,"code":"failed"}`},
		{"missing v", `{"type":"result","id":2,"value":1}`},
		{"v 2", `{"type":"result","v":2,"id":2,"value":1}`},
		{"v string", `{"type":"result","v":"1","id":2,"value":1}`},
		{"id 0", `{"type":"result","v":1,"id":0,"value":1}`},
		{"id 2.0", `{"type":"result","v":1,"id":2.0,"value":1}`},
		{"id 2e0", `{"type":"result","v":1,"id":2e0,"value":1}`},
		{"id string", `{"type":"result","v":1,"id":"2","value":1}`},
		{"id negative", `{"type":"result","v":1,"id":-2,"value":1}`},
		{"id above 2^53-1", `{"type":"result","v":1,"id":9007199254740992,"value":1}`},
		{"code not a string", `{"type":"error","v":1,"id":2,"code":5,"message":"x"}`},
		{"message not a string", `{"type":"error","v":1,"id":2,"code":"failed","message":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newConn(t, ioPipe, nil)
			f.handshake(c)
			res := pendingCalls(t, c, f, 1)
			f.send(tt.payload)
			v := checkViolation(t, c, res, wire.InvalidResponse, wire.InvalidResponse)
			if !errors.Is(v, proto.ErrInvalidEnvelope) {
				t.Errorf("detail %v", v.Err)
			}
		})
	}
}

// R35, R55: a reply to an identity never sent or already completed ends the connection.
func TestUnknownReply(t *testing.T) {
	tests := []struct {
		name  string
		reply func(f *fake)
	}{
		{"never sent", func(f *fake) { f.send(resultFrame(99, "1")) }},
		{"next id", func(f *fake) { f.send(errorFrame(4, "failed", "x")) }},
		{"initialize again", func(f *fake) { f.send(initResult) }},
		{"duplicate", func(f *fake) { f.send(resultFrame(2, "1")); f.send(resultFrame(2, "1")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newConn(t, ioPipe, nil)
			f.handshake(c)
			first := goCall(context.Background(), c, read, "")
			f.expect(request(2, read, `{}`))
			res := pendingCalls(t, c, f, 1) // id 3
			tt.reply(f)
			if tt.name == "duplicate" {
				if r := recv(t, first); r.err != nil {
					t.Fatalf("first reply: %v", r.err)
				}
			} else {
				res = append(res, first)
			}
			checkViolation(t, c, res, wire.UnknownReply, wire.UnknownReply)
		})
	}
}

// R57, A15: when the next identity would exceed the maximum, the connection ends.
func TestIDExhausted(t *testing.T) {
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{MaxRequestID: 3}})
	f.handshake(c) // id 1
	res := goCall(context.Background(), c, read, "")
	f.expect(request(2, read, `{}`))
	f.send(resultFrame(2, "2"))
	if r := recv(t, res); r.err != nil {
		t.Fatal(r.err)
	}
	pending := pendingCalls(t, c, f, 1) // id 3, the last
	_, err := c.Call(context.Background(), read, nil)
	checkOutcome(t, err, wire.CodeClosed, false, true)
	if !errors.Is(err, wire.IDExhausted) {
		t.Errorf("%v", err)
	}
	checkViolation(t, c, pending, wire.IDExhausted, wire.IDExhausted)
}

// R14, R33, R57, A14, A15: a connection whose calls start just below 2^53-1 uses the
// top identities on the wire and ends with "id space exhausted" after the last one.
func TestIDExhaustedAtTopOfRange(t *testing.T) {
	const top = limits.MaxRequestID
	c, f := newConn(t, ioPipe, &runtime.Options{FirstCallID: top - 1})
	f.handshake(c) // id 1; then a gap up to top-1
	for _, id := range []int{top - 1, top} {
		res := goCall(context.Background(), c, read, "")
		f.expect(request(id, read, `{}`))
		f.send(resultFrame(id, `"ok"`))
		if r := recv(t, res); r.err != nil {
			t.Fatalf("id %d: %v", id, r.err)
		}
	}
	_, err := c.Call(context.Background(), read, nil)
	checkOutcome(t, err, wire.CodeClosed, false, true)
	if !errors.Is(err, wire.IDExhausted) || !errors.Is(ended(t, c), wire.IDExhausted) {
		t.Fatalf("%v", err)
	}
}

// R45, R56, A36: a frame not written within the pipe write timeout (shortened here) ends
// the connection; os.Pipe uses write deadlines, io.Pipe the timer.
func TestStalledWriter(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, &runtime.Options{Limits: &limits.Limits{PipeWriteTimeout: 50 * time.Millisecond}})
			f.handshake(c)
			// The adapter stops reading; 1 MiB does not fit in any pipe buffer.
			big := `{"data":"` + strings.Repeat("x", 1<<20) + `"}`
			res := goCall(context.Background(), c, read, big)
			v := checkViolation(t, c, []<-chan result{res}, wire.InputPipe, wire.InputPipe)
			if !errors.Is(v, runtime.ErrWriteTimeout) {
				t.Errorf("detail %v", v.Err)
			}
		})
	}
}

// R51: a violation fails every pending call, also abandoned ones without a second
// outcome.
func TestViolationFailsAllPending(t *testing.T) {
	c, f := newConn(t, osPipe, nil)
	f.handshake(c)
	res := pendingCalls(t, c, f, 5)
	ctx, cancel := context.WithCancel(context.Background())
	abandoned := goCall(ctx, c, read, "")
	f.next()
	cancel()
	checkOutcome(t, recv(t, abandoned).err, wire.CodeAborted, true, false)
	f.expect(cancelFrame(7))
	f.sendRaw([]byte("garbage!"))
	checkViolation(t, c, res, wire.Output, wire.Output)
}

// R59: violations are per connection.
func TestViolationIsPerConnection(t *testing.T) {
	bad, fb := newConn(t, ioPipe, nil)
	good, fg := newConn(t, osPipe, nil)
	fb.handshake(bad)
	fg.handshake(good)
	pending := pendingCalls(t, bad, fb, 1)
	res := goCall(context.Background(), good, read, "")
	fg.expect(request(2, read, `{}`))
	fb.send(resultFrame(42, "1"))
	checkViolation(t, bad, pending, wire.UnknownReply, wire.UnknownReply)
	fg.send(resultFrame(2, `"fine"`))
	if r := recv(t, res); r.err != nil || string(r.v) != `"fine"` {
		t.Fatalf("%s %v", r.v, r.err)
	}
	if good.Err() != nil {
		t.Fatal(good.Err())
	}
}

// Close disconnects: pending calls fail closed and uncertain, the adapter sees end of
// input, Close is idempotent; Abort keeps the first cause.
func TestCloseAndAbort(t *testing.T) {
	c, f := newConn(t, osPipe, nil)
	f.handshake(c)
	res := pendingCalls(t, c, f, 2)
	errc := make(chan error, 2)
	go func() { errc <- c.Close() }()
	go func() { errc <- c.Close() }()
	for range 2 {
		if err := recv(t, errc); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if c.Err() != runtime.ErrClosed {
		t.Fatalf("Err() = %v", c.Err())
	}
	for _, ch := range res {
		r := recv(t, ch)
		checkOutcome(t, r.err, wire.CodeClosed, true, false)
		if !errors.Is(r.err, runtime.ErrClosed) {
			t.Errorf("%v", r.err)
		}
	}
	if err := f.eof(); err != io.EOF {
		t.Errorf("adapter stdin: %v", err)
	}
	c.Abort(errors.New("later"))
	if c.Err() != runtime.ErrClosed || c.Close() != nil {
		t.Errorf("Abort after Close changed the cause: %v", c.Err())
	}

	c2, f2 := newConn(t, ioPipe, nil)
	f2.handshake(c2)
	first := errors.New("host gave up")
	c2.Abort(first)
	c2.Abort(errors.New("second"))
	if c2.Err() != first || c2.Close() != first {
		t.Errorf("Err() = %v, Close() = %v", c2.Err(), c2.Close())
	}
	_, err := c2.Initialize(context.Background(), nil)
	checkOutcome(t, err, wire.CodeClosed, false, true)
}

// R51: a caller waiting for a slot when the connection ends never started.
func TestWaitingCallerOnEnd(t *testing.T) {
	c, f := newConn(t, ioPipe, &runtime.Options{Limits: &limits.Limits{MaxInFlight: 1}})
	f.handshake(c)
	pending := pendingCalls(t, c, f, 1)
	waiting := goCall(context.Background(), c, read, "")
	c.Abort(&wire.ViolationError{Kind: wire.ProcessExited})
	r := recv(t, waiting)
	checkOutcome(t, r.err, wire.CodeClosed, false, true)
	if !errors.Is(r.err, wire.ProcessExited) {
		t.Errorf("%v", r.err)
	}
	checkViolation(t, c, pending, wire.ProcessExited, wire.ProcessExited)
}

// R51, R32: when the connection ends, a request the writer had taken is uncertain, one
// still queued behind it never started.
func TestQueuedRequestsNeverStarted(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	first := goCall(context.Background(), c, read, "")
	var b [1]byte
	if _, err := io.ReadFull(f.inRaw, b[:]); err != nil { // the writer is inside its Write
		t.Fatal(err)
	}
	second := goCall(context.Background(), c, read, "")
	eventually(t, "second request queued", func() bool { return c.InFlight() == 2 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	r := recv(t, first)
	if ce := checkOutcome(t, r.err, wire.CodeClosed, true, false); ce.ID != 2 {
		t.Errorf("first: %v", r.err)
	}
	r = recv(t, second)
	if ce := checkOutcome(t, r.err, wire.CodeClosed, false, true); ce.ID != 0 || !errors.Is(r.err, runtime.ErrClosed) {
		t.Errorf("second: %v", r.err)
	}
}
