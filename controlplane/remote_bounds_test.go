package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRemoteBounds: a client that opens TCP and never handshakes is dropped after
// the handshake bound; an idle client is closed after the idle bound, but not while
// a request of its is under way; the socket and TCP share MaxClients.
func TestRemoteBounds(t *testing.T) {
	p := newPKI(t)
	// Two daemons: a handshake bound short enough for a quick test would refuse real
	// clients on a loaded machine, so it has one without them.
	quick := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.HandshakeTimeout = 200 * time.Millisecond })
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.Remote.IdleTimeout = 2 * time.Second
		cfg.MaxClients = 3
	})
	ctx := testCtx(t)

	t.Run("no handshake", func(t *testing.T) {
		d := quick
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		if n, err := nc.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("read %d, %v: want the daemon to close the connection", n, err)
		}
		waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.RefusedClients == 1 })
		if !strings.Contains(d.log.String(), "no TLS handshake within 200ms") {
			t.Errorf("log %s", d.log.String())
		}
	})

	t.Run("idle", func(t *testing.T) {
		idle := dialRemote(t, d.addr, p.client(t, "reader"))
		if _, err := idle.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		busy := dialRemote(t, d.addr, p.client(t, "reader"))
		// A Discover longer than the idle bound: the connection is busy, not idle.
		if err := busy.Discover(ctx, 5*time.Second, nil); err != nil {
			t.Fatalf("Discover outlasting the idle bound: %v", err)
		}
		select {
		case <-idle.Done():
		case <-ctx.Done():
			t.Fatal("idle client never closed")
		}
		<-busy.Done() // idle too, once its stream ended
		waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.DroppedClients == 2 && st.Clients == 1 })
		if !strings.Contains(d.log.String(), "remote client idle; closed") {
			t.Errorf("log %s", d.log.String())
		}
	})

	t.Run("max clients shared with the socket", func(t *testing.T) {
		for range 2 { // with the owner's, three clients on the socket
			if _, err := dial(t, d.sock).Ping(ctx); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := d.owner.Status(ctx)
		// Refused once its handshake is done: the dial or the first request fails.
		over, err := DialTLS(ctx, d.addr, p.client(t, "reader"))
		if err == nil {
			_, err = over.Ping(ctx)
			over.Close()
		}
		if err == nil {
			t.Fatal("a fourth client was served with MaxClients 3")
		}
		waitStatus(t, d.owner, func(st *StatusResult) bool {
			return st.Remote.RefusedClients == before.Remote.RefusedClients+1
		})
	})
}

// TestRemoteHandshakesDoNotCrowdOut: peers that open TCP and never handshake hold
// handshake slots only: the socket's clients still get in; one more such peer than
// the slots takes the slot of the one silent longest, which is closed at once.
func TestRemoteHandshakesDoNotCrowdOut(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) {
		cfg.MaxClients = 3
		cfg.Remote.HandshakeTimeout = time.Minute
	})
	ctx := testCtx(t)
	var peers []net.Conn
	for range 4 {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		peers = append(peers, nc)
	}
	first := peers[0]
	_ = first.SetDeadline(time.Now().Add(30 * time.Second))
	if n, err := first.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("longest-silent peer: read %d, %v; want it closed for the fourth", n, err)
	}
	waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Remote.RefusedClients == 1 })
	if !strings.Contains(d.log.String(), "handshake slots full (3): dropped the longest-silent pending handshake") {
		t.Errorf("log %s", d.log.String())
	}
	if _, err := dial(t, d.sock).Ping(ctx); err != nil {
		t.Fatalf("socket client while handshakes are pending: %v", err)
	}
	if st, err := d.owner.Status(ctx); err != nil || st.Clients != 2 {
		t.Fatalf("status %v, %v: want 2 clients (the silent peers are not clients)", st, err)
	}
	// A real client gets a slot too (dropping the longest-silent peer), and in.
	if _, err := dialRemote(t, d.addr, p.client(t, "reader")).Ping(ctx); err != nil {
		t.Fatalf("remote client while the handshake slots are full: %v", err)
	}
}

// TestRemoteHandshakeFlood: with 300 idle unauthenticated TCP connections open
// (more than the default handshake slots), a real client still completes a Ping
// within 3 s: it takes the slot of a silent peer. The bound is generous; before,
// the client was refused outright.
func TestRemoteHandshakeFlood(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.Remote.HandshakeTimeout = time.Minute })
	for range 300 {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	cfg := p.client(t, "reader")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := DialTLS(ctx, d.addr, cfg)
	if err != nil {
		t.Fatalf("dial under a flood of silent peers: %v", err)
	}
	defer c.Close()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping under a flood of silent peers: %v", err)
	}
}

// TestRemoteGarbage: bytes that are not TLS cost a refusal and nothing more; after
// the handshake, a body that is not an envelope is answered invalid_params on a
// connection that stays usable, and an oversized frame ends only that connection.
func TestRemoteGarbage(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, nil)
	ctx := testCtx(t)
	for _, junk := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte{0xff}, 64<<10), {0x16, 0x03, 0x01, 0xff, 0xff}} {
		nc, err := net.Dial("tcp", d.addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		_, _ = nc.Write(junk)
		_, _ = io.Copy(io.Discard, nc) // until the daemon closes it
		nc.Close()
	}
	cfg := p.client(t, "caller")
	cfg.ServerName = "127.0.0.1"
	tc, err := tls.Dial("tcp", d.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	raw := &rawConn{t: t, nc: tc}
	_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
	raw.writeFrame([]byte("not json at all"))
	if env := raw.read(); env.Error == nil || env.Error.Code != CodeInvalidParams {
		t.Fatalf("garbage body answered %+v", env)
	}
	id := newID()
	raw.writeFrame(mustJSON(map[string]any{"id": id, "kind": "request", "method": "Ping"}))
	if env := raw.read(); env.ID != id || env.Error != nil {
		t.Fatalf("Ping after garbage answered %+v", env)
	}
	raw.writeHeader(1 << 30)
	if env := raw.read(); env.Error == nil || env.Error.Code != CodeFrameTooLarge {
		t.Fatalf("oversized frame answered %+v", env)
	}
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open after an oversized frame")
	}
	st := waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Clients == 1 })
	if st.Remote.RefusedClients != 3 {
		t.Errorf("refused %d, want 3 (one per garbage connection)", st.Remote.RefusedClients)
	}
	if _, err := dialRemote(t, d.addr, p.client(t, "caller")).Send(ctx, echoSend); err != nil {
		t.Fatal(err)
	}
}
