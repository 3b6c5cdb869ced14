//go:build unix

package runtime

import (
	"context"
	"encoding/json"
	"net"
	goruntime "runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// Tests of the reader role's timer on fake time: a Conn over net.Pipe (whose read
// deadlines are timers of the bubble) inside a synctest bubble.

// inBubble runs f in a synctest bubble with the call pool empty before and after: a
// pooled call holds a channel and a timer, which belong to the bubble that made them
// and must not be used by a goroutine outside it (two collections empty a sync.Pool).
func inBubble(t *testing.T, f func(t *testing.T)) {
	goruntime.GC()
	goruntime.GC()
	t.Cleanup(func() { goruntime.GC(); goruntime.GC() })
	synctest.Test(t, f)
}

// advance lets fake time pass by d in the bubble, then waits until every goroutine of
// the bubble is blocked.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

// With nothing in flight the role stays free for exactly watchAfter; then the
// connection's own reader takes it and watches the output, so that a reply or a
// violation with no caller reading is still seen. A call meanwhile reads its own
// reply, and leaves the role free again for another watchAfter.
func TestWatchStartsAfterTheRoleStayedFree(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		host, adapter := net.Pipe()
		c := NewConn(host, host, nil)
		defer c.Close()
		a := proto.NewReader(adapter, 0)
		initialized := make(chan error, 1)
		go func() {
			_, err := c.Initialize(context.Background(), nil)
			initialized <- err
		}()
		if _, err := a.ReadFrame(); err != nil {
			t.Fatal(err)
		}
		if _, err := adapter.Write(leadFrame(`{"type":"result","v":1,"id":1,"value":` + leadCatalog + `}`)); err != nil {
			t.Fatal(err)
		}
		if err := <-initialized; err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			synctest.Wait()
			if h, _ := c.holderOf(); h != roleFree {
				t.Fatalf("round %d: with nothing in flight the role is held by %d, want free", round, h)
			}
			advance(watchAfter - time.Nanosecond)
			if h, _ := c.holderOf(); h != roleFree {
				t.Fatalf("round %d: the role was taken (by %d) before watchAfter", round, h)
			}
			advance(time.Nanosecond)
			if h, _ := c.holderOf(); h != roleLoop {
				t.Fatalf("round %d: after watchAfter the role is held by %d, want the connection's reader", round, h)
			}
			// A call now: the watching reader delivers its reply and leaves the role free.
			done := make(chan error, 1)
			go func() {
				v, err := c.Call(context.Background(), "t.echo.call", json.RawMessage(`{}`))
				if err == nil && string(v) != `"ok"` {
					t.Errorf("round %d: value %s", round, v)
				}
				done <- err
			}()
			p, err := a.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			m, err := proto.DecodeHostMessage(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adapter.Write(leadResult(m.ID, `"ok"`)); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	})
}
