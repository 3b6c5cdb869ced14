package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session serves the echo adapter over pipes and returns a call function.
func session(t *testing.T) (send func(string), recv func() proto.Message) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- newAdapter().Serve(context.Background(), inR, outW) }()
	t.Cleanup(func() {
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		outR.Close()
	})
	r := proto.NewReader(outR, 0)
	send = func(p string) {
		t.Helper()
		if err := proto.WriteFrame(inW, []byte(p), 0); err != nil {
			t.Fatal(err)
		}
	}
	recv = func() proto.Message {
		t.Helper()
		p, err := r.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			t.Fatalf("invalid envelope %q: %v", p, err)
		}
		return m
	}
	send(string(proto.AppendRequest(nil, 1, proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`))))
	if m := recv(); m.Type != proto.TypeResult {
		t.Fatalf("initialize: %s %q", m.Code, m.Message)
	}
	return send, recv
}

func TestMethods(t *testing.T) {
	long := strings.Repeat("m", limits.MaxErrorMessage+10)
	tests := []struct {
		name, method, params string
		value                string    // expected result value
		code                 wire.Code // expected error code, when value is ""
		message              string
	}{
		{"echo returns params unchanged", "example.echo.echo", `{ "a" : [1, {"b":null}] }`, `{ "a" : [1, {"b":null}] }`, "", ""},
		{"sleep", "example.echo.sleep", `{"ms":1}`, `{"ms":1}`, "", ""},
		{"sleep negative", "example.echo.sleep", `{"ms":-1}`, "", wire.CodeInvalid, "ms must be from 0 to 30000"},
		{"sleep unknown key", "example.echo.sleep", `{"s":1}`, "", wire.CodeInvalid, ""},
		{"fail with a code", "example.echo.fail", `{"code":"denied","message":"no"}`, "", wire.CodeDenied, "no"},
		{"R28 fail with an unknown code", "example.echo.fail", `{"code":"teapot","message":"short"}`, "", wire.CodeFailed, "short"},
		{"R30 fail with a long message", "example.echo.fail", `{"code":"busy","message":"` + long + `"}`, "", wire.CodeBusy, long[:limits.MaxErrorMessage]},
		{"big", "example.echo.big", `{"bytes":5}`, `"xxxxx"`, "", ""},
		{"big empty", "example.echo.big", `{"bytes":0}`, `""`, "", ""},
		{"big too large", "example.echo.big", `{"bytes":4194304}`, "", wire.CodeInvalid, "bytes must be from 0 to 4193280"},
	}
	send, recv := session(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := uint64(i + 2)
			send(string(proto.AppendRequest(nil, id, tt.method, []byte(tt.params))))
			m := recv()
			if m.ID != id {
				t.Fatalf("reply id %d, want %d", m.ID, id)
			}
			if tt.value != "" {
				if m.Type != proto.TypeResult || string(m.Value) != tt.value {
					t.Fatalf("got %s %s %q %q, want %s", m.Type, m.Value, m.Code, m.Message, tt.value)
				}
				return
			}
			if m.Type != proto.TypeError || m.RawCode != string(tt.code) || (tt.message != "" && m.Message != tt.message) {
				t.Fatalf("got %s %q %q, want %q %q", m.Type, m.RawCode, m.Message, tt.code, tt.message)
			}
		})
	}
}

// The largest big result fits in one frame.
func TestBigAtTheLimit(t *testing.T) {
	send, recv := session(t)
	send(string(proto.AppendRequest(nil, 2, "example.echo.big", []byte(`{"bytes":4193280}`))))
	if m := recv(); m.Type != proto.TypeResult || len(m.Value) != maxBig+2 {
		t.Fatalf("got %s %q, %d bytes", m.Type, m.Message, len(m.Value))
	}
}

// R37, R38: a cancelled sleep answers aborted.
func TestSleepCancel(t *testing.T) {
	send, recv := session(t)
	send(string(proto.AppendRequest(nil, 2, "example.echo.sleep", []byte(`{"ms":30000}`))))
	send(string(proto.AppendCancel(nil, 2)))
	if m := recv(); m.Type != proto.TypeError || m.ID != 2 || m.Code != wire.CodeAborted || m.Message != "Sleep canceled" {
		t.Fatalf("got %s %d %q %q", m.Type, m.ID, m.Code, m.Message)
	}
}
