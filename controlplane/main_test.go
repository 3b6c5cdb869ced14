package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"

	"go.uber.org/goleak"
)

// The test binary doubles as a daemon and as a client process for the tests about
// processes: with roleEnv set it plays that role instead of testing.
const (
	roleEnv   = "CONTROLPLANE_TEST_ROLE"
	socketEnv = "CONTROLPLANE_TEST_SOCKET"
	dirEnv    = "CONTROLPLANE_TEST_DIR"
)

// built holds the adapters built once per test binary: echo_v1.2.0,
// thermometer_v1.0.0 and the upgrade tests' versioned. Tests copy them into directories of their own.
var built string

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "daemon":
		os.Exit(daemonMain())
	case "discover-client":
		os.Exit(discoverClientMain())
	case "discover-client-tls":
		os.Exit(discoverClientTLSMain())
	}
	testkit.Main(m, &built, func(r testkit.Runner) { goleak.VerifyTestMain(r) }, testkit.Echo, testkit.Thermometer, testkit.Versioned)
}

// daemonMain is what `adapterctl serve` does: Serve until SIGTERM. Exit status 0
// means every adapter was verified gone, 3 that some were not, 2 any other failure.
func daemonMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := Serve(ctx, ServerConfig{
		Socket: os.Getenv(socketEnv), Dirs: []string{os.Getenv(dirEnv)}, Version: "test",
		OnReady: func() { fmt.Println("ready") },
	})
	var se *ShutdownError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &se):
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Fprintln(os.Stderr, err)
	return 2
}

// discoverClientMain streams Discover for a minute, printing each event's adapter
// path on its own line; the test kills it in the middle.
func discoverClientMain() int {
	ctx := context.Background()
	c, err := Dial(ctx, os.Getenv(socketEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer c.Close()
	err = c.Discover(ctx, time.Minute, func(ev DiscoverEvent) error {
		fmt.Println(ev.Change, ev.Adapter.Path)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// adapterDir returns a new directory holding copies of the named built adapters.
func adapterDir(t testing.TB, names ...string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cpa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, n := range names {
		copyFile(t, filepath.Join(built, n), filepath.Join(dir, n))
	}
	return dir
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	tmp := to + ".partial"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	// Appear at once under the final name: a scan never sees half a file there.
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// socketPath returns a short socket path (sun_path is about 104 bytes) in a new
// directory.
func socketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "ctl.sock")
}

// startServer runs Serve in this process until the test ends, and checks that it
// shut down cleanly (every adapter verified gone).
func startServer(t testing.TB, cfg ServerConfig) string {
	t.Helper()
	if cfg.Socket == "" {
		cfg.Socket = socketPath(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	cfg.OnReady = func() { close(ready) }
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v after shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return within 30 s of its context ending")
		}
	})
	return cfg.Socket
}

func dial(t testing.TB, sock string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantCode checks that err is a *Error with the code.
func wantCode(t testing.TB, err error, code Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code %s (%v), want %s", e.Code, e, code)
	}
	return e
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
