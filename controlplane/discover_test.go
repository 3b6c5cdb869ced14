package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDiscover: the stream reports every adapter at its start, then a file copied in
// (found), the same file rewritten (changed) and removed (removed), each as an event
// with the request's id, while the stream lasts.
func TestDiscover(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")
	sock := startServer(t, ServerConfig{Dirs: []string{dir}, RescanInterval: 50 * time.Millisecond})
	c := dial(t, sock)
	ctx := testCtx(t)
	added := filepath.Join(dir, "echo_v1.3.0")
	errDone := errors.New("seen everything")
	var got []DiscoverEvent
	step := 0
	err := c.Discover(ctx, time.Minute, func(ev DiscoverEvent) error {
		got = append(got, ev)
		switch {
		case step == 0 && len(got) == 2:
			// The initial scan: both adapters, sorted by name.
			if got[0].Change != changeFound || got[0].Adapter.Name != "echo" || got[0].Adapter.Version != "1.2.0" ||
				got[1].Change != changeFound || got[1].Adapter.Name != "thermometer" {
				t.Fatalf("initial events %+v", got)
			}
			copyFile(t, filepath.Join(built, "echo_v1.2.0"), added)
			step++
		case step == 1:
			if ev.Change != changeFound || ev.Adapter.Path != added || ev.Adapter.Version != "1.3.0" {
				t.Fatalf("after adding a file: %+v", ev)
			}
			f, err := os.OpenFile(added, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("more")); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			step++
		case step == 2:
			if ev.Change != changeChanged || ev.Adapter.Path != added {
				t.Fatalf("after changing the file: %+v", ev)
			}
			if err := os.Remove(added); err != nil {
				t.Fatal(err)
			}
			step++
		case step == 3:
			if ev.Change != changeRemoved || ev.Adapter.Path != added {
				t.Fatalf("after removing the file: %+v", ev)
			}
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		t.Fatalf("Discover = %v after %d events: %+v", err, len(got), got)
	}
	// The abandoned stream does not disturb the connection.
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// A Send finds the adapter a Discover reported, and a short stream ends with its
	// final response.
	copyFile(t, filepath.Join(built, "echo_v1.2.0"), added)
	n := 0
	if err := c.Discover(ctx, 100*time.Millisecond, func(DiscoverEvent) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("short Discover: %d events, want 3", n)
	}
	res, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo"})
	if err != nil || res.Adapter.Path != added {
		t.Fatalf("Send to echo = %+v, %v: want the newest version, %s", res, err, added)
	}
}
