package plugin_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// A14: a request id that does not increase ends the connection.
func TestNonIncreasingID(t *testing.T) {
	tests := []struct{ name, second string }{
		{"same id", `{"type":"request","v":1,"id":5,"method":"test.svc.echo","params":{}}`},
		{"lower id", `{"type":"request","v":1,"id":4,"method":"test.svc.echo","params":{}}`},
		{"lower id with an extra field", `{"type":"request","v":1,"id":3,"method":"test.svc.echo","params":{},"x":1}`},
		{"lower id for initialize", `{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := serve(t, newFixture().adapter())
			h.initialize()
			h.send(`{"type":"request","v":1,"id":5,"method":"test.svc.echo","params":{}}`)
			expectResult(t, h.recv(), 5, `{}`)
			h.send(tt.second)
			errorsAsViolation(t, h.ended(), wire.HostIDNotAbove)
		})
	}
}

// A28, R4, R5: payloads that cannot be tied to a request id end the connection.
func TestUntiedFaultsEndConnection(t *testing.T) {
	frame := func(p string) string { return string(append([]byte{0, 0, 0, byte(len(p))}, p...)) }
	tests := []struct {
		name, raw string
		detail    error
	}{
		{"R4 zero-length frame", "\x00\x00\x00\x00", proto.ErrFrameEmpty},
		{"R5 oversized frame", "\x00\x40\x00\x01", proto.ErrFrameTooLarge},
		{"truncated frame", "\x00\x00\x00\x10{}", proto.ErrFrameTruncated},
		{"not JSON", frame(`hello`), proto.ErrInvalidEnvelope},
		{"not an object", frame(`[1,2]`), proto.ErrInvalidEnvelope},
		{"invalid UTF-8", frame("{\"type\":\"request\",\"v\":1,\"id\":2,\"method\":\"\xff\",\"params\":{}}"), proto.ErrInvalidEnvelope},
		{"unknown type", frame(`{"type":"event","v":1,"id":2}`), proto.ErrInvalidEnvelope},
		{"R10 wrong direction", frame(`{"type":"result","v":1,"id":2,"value":1}`), proto.ErrInvalidEnvelope},
		{"A6 id zero", frame(`{"type":"request","v":1,"id":0,"method":"a.b","params":{}}`), proto.ErrInvalidEnvelope},
		{"A6 id string", frame(`{"type":"request","v":1,"id":"2","method":"a.b","params":{}}`), proto.ErrInvalidEnvelope},
		{"A6 id float", frame(`{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}`), proto.ErrInvalidEnvelope},
		{"A6 id too large", frame(`{"type":"request","v":1,"id":9007199254740992,"method":"a.b","params":{}}`), proto.ErrInvalidEnvelope},
		{"missing type", frame(`{"v":1,"id":2}`), proto.ErrInvalidEnvelope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := serve(t, newFixture().adapter())
			h.initialize()
			if _, err := io.WriteString(h.in, tt.raw); err != nil {
				t.Fatal(err)
			}
			if tt.name == "truncated frame" {
				h.in.Close()
			}
			errorsAsViolation(t, h.ended(), tt.detail)
		})
	}
}

// R49: on stdin EOF every handler is cancelled and Serve returns promptly; the
// cancelled handlers' replies are still written.
func TestStdinEOF(t *testing.T) {
	f := newFixture()
	h := serve(t, f.adapter())
	h.initialize()
	for range 3 {
		h.request("test.svc.wait", `{}`)
	}
	for range 3 {
		<-f.started
	}
	if err := h.disconnect(); err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
	for range 3 {
		if cause := <-f.causes; !errors.Is(cause, plugin.ErrDisconnected) {
			t.Fatalf("handler cause %v, want ErrDisconnected", cause)
		}
		if m := h.recv(); m.Code != wire.CodeAborted {
			t.Fatalf("reply %s %s, want aborted", m.Type, m.Code)
		}
	}
}

// R49: a handler that ignores cancellation does not keep Serve from returning.
func TestStdinEOFAbandonsStuckHandler(t *testing.T) {
	f := newFixture()
	t.Cleanup(f.unblock)
	h := serve(t, f.adapter())
	h.initialize()
	h.request("test.svc.stubborn", `{}`)
	<-f.started
	start := time.Now()
	err := h.disconnect()
	if !errors.Is(err, plugin.ErrShutdownIncomplete) {
		t.Fatalf("Serve returned %v, want ErrShutdownIncomplete", err)
	}
	t.Logf("returned after %v with a stuck handler", time.Since(start))
}

// Serve returns when its context is done, cancelling handlers.
func TestServeContext(t *testing.T) {
	f := newFixture()
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.adapter().Serve(ctx, inR, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Serve ignored its context")
	}
}

// Serve ends the connection when its output fails (R52 from the adapter's side).
func TestOutputFailure(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	outR.Close()
	done := make(chan error, 1)
	go func() { done <- newFixture().adapter().Serve(context.Background(), inR, outW) }()
	frame, err := proto.AppendFrame(nil, proto.AppendRequest(nil, 1, proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`)), 0, false)
	if err == nil {
		_, err = inW.Write(frame)
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Serve returned %v, want the write error", err)
		}
	case <-time.After(wait):
		t.Fatal("Serve ignored a failed output")
	}
}
