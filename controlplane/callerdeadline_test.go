package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// A Send whose timeout_ms is shorter than the protocol's call deadline ends by the
// caller's choice, and its deadline is counted among the caller's errors; one that
// chose none (or the whole deadline) and outlives the protocol's deadline is the
// adapter's doing, not counted there.
func TestSendDeadlineWhose(t *testing.T) {
	var mon Monitor
	lim := &limits.Limits{CallDeadline: 300 * time.Millisecond}
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}, Limits: lim, Monitor: &mon})
	c := dial(t, sock)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sleep := func(timeoutMS int64) {
		t.Helper()
		_, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.sleep", Params: json.RawMessage(`{"ms":3000}`), TimeoutMS: timeoutMS})
		var cpe *Error
		if !errors.As(err, &cpe) {
			t.Fatalf("sleep with timeout_ms %d: %v, want a deadline", timeoutMS, err)
		}
	}
	sleep(0)
	sleep(300)
	sleep(50)
	var st *AdapterStats
	for _, a := range mon.Adapters() {
		if a.Name == "echo" {
			st = &a
		}
	}
	if st == nil {
		t.Fatal("echo not among the monitored adapters")
	}
	for _, m := range st.Stats.Methods {
		if m.Method != "example.echo.sleep" {
			continue
		}
		if m.Errors[wire.CodeDeadline] != 3 || m.CallerErrors[wire.CodeDeadline] != 1 || len(m.CallerErrors) != 1 {
			t.Fatalf("errors %v, caller errors %v: want 3 deadlines, 1 of them the caller's", m.Errors, m.CallerErrors)
		}
		return
	}
	t.Fatalf("no figures of example.echo.sleep: %+v", st.Stats.Methods)
}
