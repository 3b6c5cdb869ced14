package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session serves the echo adapter over pipes and returns a send and a receive
// function; with initialize, the connection is initialized first.
func session(t *testing.T, initialize bool) (send func(string), recv func() proto.Message) {
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
		frame, err := proto.AppendFrame(nil, []byte(p), 0, false)
		if err == nil {
			_, err = inW.Write(frame)
		}
		if err != nil {
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
	if initialize {
		send(string(proto.AppendRequest(nil, 1, proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`))))
		if m := recv(); m.Type != proto.TypeResult {
			t.Fatalf("initialize: %s %q", m.Code, m.Message)
		}
	}
	return send, recv
}

// conformance is testdata/conformance/echo.json: the frames every SDK's echo adapter
// must answer as this one does (see its "about").
type conformance struct {
	Cases []struct {
		Name       string
		Initialize *bool
		Send       []string
		Expect     []struct {
			ID      uint64
			Type    string
			Code    string
			Message *string
			Value   *string
		}
	}
}

// The shared conformance frames: the Go echo is the reference every SDK's echo is held
// to, so it must pass them too.
func TestConformance(t *testing.T) {
	var doc conformance
	testkit.Vectors(t, "echo.json", &doc)
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			send, recv := session(t, c.Initialize == nil || *c.Initialize)
			for _, f := range c.Send {
				send(f)
			}
			got := map[uint64]proto.Message{}
			for range c.Expect {
				m := recv()
				got[m.ID] = m
			}
			for _, want := range c.Expect {
				m, ok := got[want.ID]
				switch {
				case !ok:
					t.Fatalf("no reply to id %d", want.ID)
				case fmt.Sprint(m.Type) != want.Type || m.RawCode != want.Code:
					t.Fatalf("id %d: got %s %q %q %s, want %s %q", want.ID, m.Type, m.RawCode, m.Message, m.Value, want.Type, want.Code)
				case want.Message != nil && m.Message != *want.Message:
					t.Fatalf("id %d: message\n got %q\nwant %q", want.ID, m.Message, *want.Message)
				case want.Value != nil:
					if same, err := testkit.SameJSON(m.Value, []byte(*want.Value)); err != nil || !same {
						t.Fatalf("id %d: value\n got %s\nwant %s (%v)", want.ID, m.Value, *want.Value, err)
					}
				}
			}
		})
	}
}

// R30: a message longer than 4096 bytes is capped (too long a text for the shared
// vectors, which hold the cases every SDK shares).
func TestFailLongMessage(t *testing.T) {
	long := strings.Repeat("m", limits.MaxErrorMessage+10)
	send, recv := session(t, true)
	send(string(proto.AppendRequest(nil, 2, "example.echo.fail", []byte(`{"code":"busy","message":"`+long+`"}`))))
	if m := recv(); m.Type != proto.TypeError || m.Code != wire.CodeBusy || m.Message != long[:limits.MaxErrorMessage] {
		t.Fatalf("got %s %q, %d bytes", m.Type, m.Code, len(m.Message))
	}
}

// The largest big result fits in one frame.
func TestBigAtTheLimit(t *testing.T) {
	send, recv := session(t, true)
	send(string(proto.AppendRequest(nil, 2, "example.echo.big", []byte(`{"bytes":4193280}`))))
	if m := recv(); m.Type != proto.TypeResult || len(m.Value) != maxBig+2 {
		t.Fatalf("got %s %q, %d bytes", m.Type, m.Message, len(m.Value))
	}
}

// R37, R38: a cancelled sleep answers aborted.
func TestSleepCancel(t *testing.T) {
	send, recv := session(t, true)
	send(string(proto.AppendRequest(nil, 2, "example.echo.sleep", []byte(`{"ms":30000}`))))
	send(string(proto.AppendCancel(nil, 2)))
	if m := recv(); m.Type != proto.TypeError || m.ID != 2 || m.Code != wire.CodeAborted || m.Message != "Sleep canceled" {
		t.Fatalf("got %s %d %q %q", m.Type, m.ID, m.Code, m.Message)
	}
}
