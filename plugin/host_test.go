package plugin_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// wait bounds every wait of the tests: generous, only there so a bug cannot hang the run.
const wait = 10 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runChild() // never returns: a re-run of this binary as an adapter process
	}
	goleak.VerifyTestMain(m)
}

// host is a hand-written host: it speaks to an adapter served by Serve over io.Pipe.
type host struct {
	t      testing.TB
	in     *io.PipeWriter // the adapter's stdin, written by the host
	outR   *io.PipeReader // the adapter's stdout, read by the host
	frames chan []byte    // frames read from the adapter
	rerr   chan error     // the read loop's end
	served chan error     // Serve's return
	nextID uint64
}

// serve starts Serve over pipes and registers a cleanup that ends it and checks that
// everything stopped.
func serve(t testing.TB, a *plugin.Adapter) *host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &host{t: t, in: inW, outR: outR, frames: make(chan []byte, 4096), rerr: make(chan error, 1), served: make(chan error, 1)}
	go func() { h.served <- a.Serve(context.Background(), inR, outW) }()
	go func() {
		r := proto.NewReader(outR, 0)
		for {
			p, err := r.ReadFrame()
			if err != nil {
				close(h.frames)
				h.rerr <- err
				return
			}
			h.frames <- p
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-h.served:
		case <-time.After(wait):
			t.Error("Serve did not return after stdin was closed")
		}
		outR.Close()
		inR.Close()
		for range h.frames {
		}
	})
	return h
}

// send writes one raw payload as a frame.
func (h *host) send(payload string) {
	h.t.Helper()
	frame, err := proto.AppendFrame(nil, []byte(payload), 0, false)
	if err == nil {
		_, err = h.in.Write(frame)
	}
	if err != nil {
		h.t.Fatalf("writing to the adapter: %v", err)
	}
}

// request sends a request with the next id and returns the id.
func (h *host) request(method, params string) uint64 {
	h.t.Helper()
	h.nextID++
	h.send(string(proto.AppendRequest(nil, h.nextID, method, []byte(params))))
	return h.nextID
}

func (h *host) cancel(id uint64) {
	h.t.Helper()
	h.send(string(proto.AppendCancel(nil, id)))
}

// recvRaw returns the next frame's payload.
func (h *host) recvRaw() []byte {
	h.t.Helper()
	select {
	case p, ok := <-h.frames:
		if !ok {
			h.t.Fatalf("adapter output ended: %v", <-h.rerr)
		}
		return p
	case <-time.After(wait):
		h.t.Fatal("no reply from the adapter")
	}
	return nil
}

// recv returns the next reply, decoded strictly as a host does.
func (h *host) recv() proto.Message {
	h.t.Helper()
	p := h.recvRaw()
	m, err := proto.DecodeAdapterMessage(p)
	if err != nil {
		h.t.Fatalf("adapter sent an invalid envelope %q: %v", p, err)
	}
	return m
}

// call sends a request and returns its reply, which must be the next frame.
func (h *host) call(method, params string) proto.Message {
	h.t.Helper()
	id := h.request(method, params)
	m := h.recv()
	if m.ID != id {
		h.t.Fatalf("reply for id %d, want %d", m.ID, id)
	}
	return m
}

// initialize performs the handshake with an empty configuration.
func (h *host) initialize() {
	h.t.Helper()
	m := h.call(proto.MethodInitialize, `{"protocol":1,"configuration":{}}`)
	if m.Type != proto.TypeResult {
		h.t.Fatalf("initialize answered %s %s %q", m.Type, m.Code, m.Message)
	}
	if _, err := proto.DecodeCatalog(m.Value); err != nil {
		h.t.Fatalf("initialize catalog: %v", err)
	}
}

// disconnect closes stdin and returns Serve's result.
func (h *host) disconnect() error {
	h.t.Helper()
	h.in.Close()
	select {
	case err := <-h.served:
		h.served <- err // for the cleanup
		return err
	case <-time.After(wait):
		h.t.Fatal("Serve did not return after stdin was closed")
	}
	return nil
}

// ended waits for Serve to return while stdin is still open (a violation).
func (h *host) ended() error {
	h.t.Helper()
	select {
	case err := <-h.served:
		h.served <- err
		return err
	case <-time.After(wait):
		h.t.Fatal("Serve did not end the connection")
	}
	return nil
}

// expectError checks that m is an error reply with the code and message.
func expectError(t testing.TB, m proto.Message, id uint64, code wire.Code, message string) {
	t.Helper()
	if m.Type != proto.TypeError || m.ID != id || m.Code != code || m.RawCode != string(code) || m.Message != message {
		t.Fatalf("got %s id %d code %q message %q; want error id %d code %q message %q", m.Type, m.ID, m.RawCode, m.Message, id, code, message)
	}
}

// expectResult checks that m is a result with the exact value.
func expectResult(t testing.TB, m proto.Message, id uint64, value string) {
	t.Helper()
	if m.Type != proto.TypeResult || m.ID != id || string(m.Value) != value {
		t.Fatalf("got %s id %d value %s (code %q %q); want result id %d value %s", m.Type, m.ID, m.Value, m.Code, m.Message, id, value)
	}
}

// errorsAsViolation checks that err is a host violation with the given detail.
func errorsAsViolation(t testing.TB, err error, detail error) {
	t.Helper()
	var v *wire.ViolationError
	if !errors.As(err, &v) || !errors.Is(err, wire.ErrHostViolation) {
		t.Fatalf("Serve returned %v (%T), want a *wire.ViolationError", err, err)
	}
	if detail != nil && !errors.Is(err, detail) {
		t.Fatalf("Serve returned %v, want one wrapping %v", err, detail)
	}
}
