package controlplane

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestIdleSocketClient: a socket client with no request under way is closed after
// ServerConfig.IdleTimeout; one whose Discover stream outlasts it is not.
func TestIdleSocketClient(t *testing.T) {
	log := new(logBuffer)
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}, IdleTimeout: 300 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: log, Level: hclog.Info})})
	ctx := testCtx(t)
	idle := dial(t, sock)
	if _, err := idle.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := net.Dial("unix", sock) // connected, never a byte sent
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	busy := dial(t, sock)
	// A stream several times the idle bound: the connection is busy, not idle.
	if err := busy.Discover(ctx, 1500*time.Millisecond, nil); err != nil {
		t.Fatalf("Discover outlasting the idle bound: %v", err)
	}
	select {
	case <-idle.Done():
	case <-ctx.Done():
		t.Fatal("idle client never closed")
	}
	_ = raw.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := raw.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
		t.Fatalf("silent connection: read %d, %v; want it closed by the daemon", n, err)
	}
	select {
	case <-busy.Done(): // idle too, once its stream ended
	case <-ctx.Done():
		t.Fatal("client idle after its stream never closed")
	}
	if !strings.Contains(log.String(), "socket client idle; closed") {
		t.Errorf("log %s", log.String())
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestConnBudgetOwnerNotLockedOut: 300 idle connections on the socket (more than
// the default MaxClients, 256) do not keep a new client out: it takes the slot of
// the one idle the longest. A client with a request under way is never the one
// closed, and when every slot has one, a new client is refused.
func TestConnBudgetOwnerNotLockedOut(t *testing.T) {
	ctx := testCtx(t)
	t.Run("300 idle", func(t *testing.T) {
		sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
		busy := dial(t, sock)
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		var wg sync.WaitGroup
		var discoverErr error
		streaming := make(chan struct{})
		wg.Go(func() {
			first := true
			discoverErr = busy.Discover(sctx, time.Minute, func(DiscoverEvent) error {
				if first {
					first = false
					close(streaming)
				}
				return nil
			})
		})
		<-streaming // under way once its first event came
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for range 300 {
			nc, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, nc)
		}
		c := dial(t, sock)
		if _, err := c.Ping(ctx); err != nil {
			t.Fatalf("the owner's new client, with 300 idle connections held: %v", err)
		}
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Clients != 256 || st.DroppedClients < 300+2-256 {
			t.Errorf("clients %d, dropped %d: want 256 and at least %d closed idle", st.Clients, st.DroppedClients, 300+2-256)
		}
		stop()
		wg.Wait()
		if !errors.Is(discoverErr, context.Canceled) {
			t.Errorf("the busy client's stream: %v, want it under way until cancelled", discoverErr)
		}
	})
	t.Run("every slot busy", func(t *testing.T) {
		sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}, MaxClients: 2})
		sctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer stop()
		streaming := make(chan struct{}, 2)
		for range 2 {
			c := dial(t, sock)
			wg.Go(func() {
				first := true
				_ = c.Discover(sctx, time.Minute, func(DiscoverEvent) error {
					if first {
						first = false
						streaming <- struct{}{}
					}
					return nil
				})
			})
		}
		<-streaming // each stream is under way once its first event came
		<-streaming
		c := dial(t, sock)
		if _, err := c.Ping(ctx); err == nil {
			t.Fatal("a third client served while two streams held both slots")
		}
	})
}
