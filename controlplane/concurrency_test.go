package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Test50Clients: fifty clients at once, each with its own connection, each making
// every kind of call; all are answered, the adapters opened once.
func Test50Clients(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")}})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			errs <- func() error {
				c, err := Dial(ctx, sock)
				if err != nil {
					return err
				}
				defer c.Close()
				if _, err := c.Ping(ctx); err != nil {
					return err
				}
				want := fmt.Sprintf(`{"client":%d}`, i)
				res, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo", Params: json.RawMessage(want)})
				if err != nil {
					return err
				}
				if string(res.Value) != want {
					return fmt.Errorf("client %d got %s", i, res.Value)
				}
				if _, err := c.Send(ctx, SendParams{Adapter: "thermometer", Method: "example.device.read", Params: json.RawMessage(`{"probe":"inlet"}`)}); err != nil {
					return err
				}
				if err := c.Discover(ctx, 10*time.Millisecond, nil); err != nil {
					return err
				}
				if _, err := c.Status(ctx); err != nil {
					return err
				}
				_, err = c.Capabilities(ctx)
				return err
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	st, err := dial(t, sock).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Adapters) != 2 || st.Calls != 100 || st.Restarts != 0 {
		t.Errorf("Status after 50 clients: adapters %d calls %d restarts %d", len(st.Adapters), st.Calls, st.Restarts)
	}
}

// TestSlowClient: a client that sends requests and never reads their large answers
// is dropped after the write timeout; meanwhile other clients are served, and
// the adapters are not held up.
func TestSlowClient(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}, WriteTimeout: 300 * time.Millisecond})
	ctx := testCtx(t)
	slow := dialRaw(t, sock)
	for range 8 { // 8 MiB of answers: far beyond any socket buffer, so its writes stall
		slow.writeFrame(mustJSON(map[string]any{"id": newID(), "kind": "request", "method": "Send",
			"params": map[string]any{"adapter": "echo", "method": "example.echo.big", "params": map[string]any{"bytes": 1 << 20}}}))
	}
	c := dial(t, sock)
	for {
		if _, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo"}); err != nil {
			t.Fatal(err)
		}
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.DroppedClients == 1 && st.Clients == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the slow client was not dropped: %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestClientLeavesMidCall: a client that disconnects while its Send is in flight
// costs nothing: the call is cancelled at the adapter (its slot freed) and the
// daemon serves on.
func TestClientLeavesMidCall(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}})
	ctx := testCtx(t)
	c := dial(t, sock)
	if _, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo"}); err != nil {
		t.Fatal(err)
	}
	leaving, err := Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = leaving.Send(callCtx, SendParams{Adapter: "echo", Method: "example.echo.sleep", Params: json.RawMessage(`{"ms":25000}`)})
	}()
	waitStatus(t, c, func(st *StatusResult) bool { return st.InFlight == 1 && st.Adapters[0].InFlight == 1 })
	cancel()
	_ = leaving.Close()
	waitStatus(t, c, func(st *StatusResult) bool {
		return st.InFlight == 0 && st.Adapters[0].InFlight == 0 && st.Clients == 1
	})
}

// waitStatus polls Status until cond holds, failing after the test's context.
func waitStatus(t *testing.T, c *Client, cond func(*StatusResult) bool) *StatusResult {
	t.Helper()
	ctx := testCtx(t)
	for {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cond(st) {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("condition never held; last status %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
