package plugin_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
)

// lendSize is the length of the JSON string the fill handlers return: over the size of a
// batched frame, so the result is not encoded into the reply frame with the envelope.
const lendSize = 96 << 10

// fillParams names the letter a fill handler fills its buffer with.
type fillParams struct {
	C string `json:"c"`
}

// fillHandler returns a handler that fills one shared, pooled buffer with a JSON string
// of the letter asked for, puts the buffer back in its pool and returns its bytes: the
// next request's handler reuses the buffer right away. filled receives a value once a
// handler has put the buffer back.
func fillHandler(filled chan<- struct{}) func(context.Context, fillParams) (json.RawMessage, error) {
	pool := make(chan []byte, 1)
	pool <- make([]byte, lendSize)
	return func(_ context.Context, p fillParams) (json.RawMessage, error) {
		b := <-pool
		b[0], b[len(b)-1] = '"', '"'
		for i := 1; i < len(b)-1; i++ {
			b[i] = p.C[0]
		}
		pool <- b
		filled <- struct{}{}
		return b, nil
	}
}

// readFrame reads one frame's payload from r by hand, so the test decides how much of the
// adapter's output has been read.
func readFrame(t *testing.T, r io.Reader, head []byte) []byte {
	t.Helper()
	if head == nil {
		head = make([]byte, 4)
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatalf("reading a frame header: %v", err)
		}
	}
	p := make([]byte, binary.BigEndian.Uint32(head))
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	return p
}

// A handler that returns the bytes of a pooled buffer and reuses the buffer as soon as it
// returned gets the bytes it returned on the wire: Handle copies a large json.RawMessage
// result before the handler's memory can change, while the frame waits for its turn to be
// written. The adapter's output is a pipe the test reads by hand: the first reply is only
// partly read when the second request's handler overwrites the buffer.
func TestHandleCopiesLargeRawResult(t *testing.T) {
	filled := make(chan struct{}, 2)
	svc := plugin.NewService("test.lend", 1)
	plugin.Handle(svc, "test.lend.fill", fillHandler(filled))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- (&plugin.Adapter{Services: []*plugin.Service{svc}}).Serve(context.Background(), inR, outW)
	}()
	defer func() {
		inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }() // ends when outR is closed
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		outR.Close()
	}()
	send := func(payload []byte) {
		t.Helper()
		frame, err := proto.AppendFrame(nil, payload, 0, false)
		if err == nil {
			_, err = inW.Write(frame)
		}
		if err != nil {
			t.Fatalf("writing to the adapter: %v", err)
		}
	}
	send(proto.AppendRequest(nil, 1, proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`)))
	readFrame(t, outR, nil)

	send(proto.AppendRequest(nil, 2, "test.lend.fill", []byte(`{"c":"a"}`)))
	<-filled
	head := make([]byte, 4) // the writer has begun writing the first reply: its handler is done
	if _, err := io.ReadFull(outR, head); err != nil {
		t.Fatal(err)
	}
	send(proto.AppendRequest(nil, 3, "test.lend.fill", []byte(`{"c":"b"}`)))
	<-filled // the buffer now holds b's, while the first reply is still being written

	for _, want := range []struct {
		id     uint64
		letter byte
	}{{2, 'a'}, {3, 'b'}} {
		m, err := proto.DecodeAdapterMessage(readFrame(t, outR, head))
		head = nil
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != want.id || m.Type != proto.TypeResult {
			t.Fatalf("got %s for id %d, want a result for id %d", m.Type, m.ID, want.id)
		}
		value := bytes.Repeat([]byte{want.letter}, lendSize)
		value[0], value[len(value)-1] = '"', '"'
		if !bytes.Equal(m.Value, value) {
			t.Fatalf("reply %d: the value is not the %d bytes of %q the handler returned (%d a's, %d b's)",
				want.id, lendSize, want.letter, bytes.Count(m.Value, []byte("a")), bytes.Count(m.Value, []byte("b")))
		}
	}
}

// HandleLent serves a large json.RawMessage result from the handler's own memory: a
// slice made for the one result reaches the host whole, as does the request's params
// returned unchanged.
func TestHandleLent(t *testing.T) {
	svc := plugin.NewService("test.lend", 1)
	plugin.HandleLent(svc, "test.lend.make", func(_ context.Context, p fillParams) (json.RawMessage, error) {
		b := bytes.Repeat([]byte(p.C), lendSize)
		b[0], b[len(b)-1] = '"', '"'
		return b, nil
	})
	plugin.HandleLent(svc, "test.lend.echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	h := serve(t, &plugin.Adapter{Services: []*plugin.Service{svc}})
	h.initialize()
	want := bytes.Repeat([]byte("z"), lendSize)
	want[0], want[len(want)-1] = '"', '"'
	if m := h.call("test.lend.make", `{"c":"z"}`); m.Type != proto.TypeResult || !bytes.Equal(m.Value, want) {
		t.Fatalf("make: got %s %s, %d bytes", m.Type, m.Message, len(m.Value))
	}
	params := `{"c":` + string(want) + `}`
	if m := h.call("test.lend.echo", params); m.Type != proto.TypeResult || string(m.Value) != params {
		t.Fatalf("echo: got %s %s, %d bytes", m.Type, m.Message, len(m.Value))
	}
}
