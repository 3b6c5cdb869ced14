package controlplane_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/limits"
)

// fakeDaemon answers a Client over net.Pipe with what a test scripts.
func fakeDaemon(t *testing.T, script func(nc net.Conn, req controlplane.Envelope)) *controlplane.Client {
	t.Helper()
	cs, ss := net.Pipe()
	c := controlplane.NewClient(cs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ss.Close()
		var hdr [4]byte
		if _, err := io.ReadFull(ss, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(ss, body); err != nil {
			return
		}
		var req controlplane.Envelope
		if err := json.Unmarshal(body, &req); err != nil {
			return
		}
		script(ss, req)
	}()
	t.Cleanup(func() { _ = c.Close(); <-done })
	return c
}

func writeEnv(nc net.Conn, env controlplane.Envelope) {
	b, _ := json.Marshal(env)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	_, _ = nc.Write(append(hdr[:], b...))
}

// A daemon that answers and then closes the connection (one shutting down, a one-shot
// server) has answered: Call returns the answer, never the end of the connection. The
// reader hands the answer over before it marks the connection ended, but a caller
// scheduled late finds both ready at once and select picks either; so many rounds, each
// of which loses the answer half the time when the caller does not prefer it.
func TestClientAnswerThenClose(t *testing.T) {
	ctx := context.Background()
	for i := range 2000 {
		c := fakeDaemon(t, func(nc net.Conn, req controlplane.Envelope) {
			writeEnv(nc, controlplane.Envelope{ID: req.ID, Kind: controlplane.KindResponse, Result: json.RawMessage(`{"server_time":"2020-01-02T03:04:05Z"}`)})
		})
		if _, err := c.Ping(ctx); err != nil {
			t.Fatalf("round %d: Ping = %v, want the answer sent before the close", i, err)
		}
		_ = c.Close()
	}
}

func TestClientProtocolErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("oversized frame from the daemon", func(t *testing.T) {
		c := fakeDaemon(t, func(nc net.Conn, _ controlplane.Envelope) {
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], limits.ControlMaxFrameSize+1)
			_, _ = nc.Write(hdr[:])
		})
		_, err := c.Ping(ctx)
		if !errors.Is(err, controlplane.ErrProtocol) || !errors.Is(err, controlplane.ErrFrameTooLarge) {
			t.Fatalf("Ping = %v, want ErrProtocol and ErrFrameTooLarge", err)
		}
	})
	t.Run("id-less frame_too_large", func(t *testing.T) {
		c := fakeDaemon(t, func(nc net.Conn, _ controlplane.Envelope) {
			writeEnv(nc, controlplane.Envelope{Kind: controlplane.KindResponse, Error: &controlplane.Error{Code: controlplane.CodeFrameTooLarge, Message: "too big"}})
		})
		_, err := c.Ping(ctx)
		if controlplane.CodeOf(err) != controlplane.CodeFrameTooLarge {
			t.Fatalf("Ping = %v, want the daemon's frame_too_large", err)
		}
		<-c.Done()
		if controlplane.CodeOf(c.Err()) != controlplane.CodeFrameTooLarge {
			t.Fatalf("Err() = %v", c.Err())
		}
	})
	t.Run("not an envelope", func(t *testing.T) {
		c := fakeDaemon(t, func(nc net.Conn, _ controlplane.Envelope) {
			_, _ = nc.Write([]byte{0, 0, 0, 2, '[', ']'})
		})
		if _, err := c.Ping(ctx); !errors.Is(err, controlplane.ErrProtocol) {
			t.Fatalf("Ping = %v, want ErrProtocol", err)
		}
	})
	t.Run("event for an unstreamed request", func(t *testing.T) {
		c := fakeDaemon(t, func(nc net.Conn, req controlplane.Envelope) {
			writeEnv(nc, controlplane.Envelope{ID: req.ID, Kind: controlplane.KindEvent, Method: "Ping", Params: json.RawMessage(`{}`)})
		})
		if _, err := c.Ping(ctx); !errors.Is(err, controlplane.ErrProtocol) {
			t.Fatalf("Ping = %v, want ErrProtocol", err)
		}
	})
	t.Run("answer to an unknown id is dropped", func(t *testing.T) {
		c := fakeDaemon(t, func(nc net.Conn, req controlplane.Envelope) {
			writeEnv(nc, controlplane.Envelope{ID: controlplane.NewID(), Kind: controlplane.KindResponse, Result: json.RawMessage(`{}`)})
			writeEnv(nc, controlplane.Envelope{ID: req.ID, Kind: controlplane.KindResponse, Result: json.RawMessage(`{"server_time":"2020-01-02T03:04:05Z"}`)})
		})
		p, err := c.Ping(ctx)
		if err != nil || p.ServerTime.Year() != 2020 {
			t.Fatalf("Ping = %+v, %v", p, err)
		}
	})
	t.Run("closed client", func(t *testing.T) {
		c := fakeDaemon(t, func(net.Conn, controlplane.Envelope) {})
		_ = c.Close()
		if _, err := c.Ping(ctx); !errors.Is(err, controlplane.ErrClientClosed) {
			t.Fatalf("Ping after Close = %v", err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		block := make(chan struct{})
		c := fakeDaemon(t, func(net.Conn, controlplane.Envelope) { <-block })
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Ping = %v", err)
		}
		close(block)
	})
}
