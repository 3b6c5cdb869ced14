package plugin_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// frames concatenates payloads as frames.
func frames(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// FuzzServe feeds arbitrary input to Serve: it must never panic or hang, and what it
// writes must be valid frames of valid envelopes.
func FuzzServe(f *testing.F) {
	initialize := `{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`
	f.Add(frames(initialize))
	f.Add(frames(initialize, `{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`))
	f.Add(frames(initialize, `{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"slow"}}`, `{"type":"cancel","v":1,"id":2}`))
	f.Add(frames(initialize, `{"type":"request","v":1,"id":2,"method":"test.svc.wait","params":{}}`, `{"type":"request","v":1,"id":3,"method":"test.svc.decode","params":{"count":1.5}}`))
	f.Add(frames(initialize, `{"type":"request","v":1,"id":2,"method":"test.svc.fail","params":{"mode":"panic"}}`, `{"type":"request","v":1,"id":2,"method":"x.y","params":{}}`))
	f.Add(frames(`{"type":"request","v":1,"id":1,"method":"a.b","params":{},"x":1}`, `{"type":"cancel","v":1}`))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		fx := newFixture()
		defer fx.unblock() // a stubborn handler may outlive Serve's bounded wait
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- fx.adapter().Serve(context.Background(), bytes.NewReader(data), &out) }()
		select {
		case <-done:
		case <-time.After(wait):
			fx.unblock()
			t.Fatal("Serve hung")
		}
		r := proto.NewReader(&out, 0)
		for {
			p, err := r.ReadFrame()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("bad output frame: %v", err)
			}
			if _, err := proto.DecodeAdapterMessage(p); err != nil {
				t.Fatalf("bad output envelope %q: %v", p, err)
			}
		}
	})
}
