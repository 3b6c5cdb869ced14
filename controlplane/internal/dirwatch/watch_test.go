package dirwatch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/controlplane/internal/dirwatch"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a Rescanner that counts its calls and tells each on a channel.
type counter struct {
	mu sync.Mutex
	n  int
	c  chan struct{}
}

func (c *counter) Rescan(context.Context, ...string) error {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	select {
	case c.c <- struct{}{}:
	default:
	}
	return nil
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// run starts Run and returns a function that stops it and returns its error.
func run(t *testing.T, r dirwatch.Rescanner, dirs []string, opts *dirwatch.Options) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dirwatch.Run(ctx, r, dirs, opts) }()
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { _ = stop() })
	return stop
}

func wait(t *testing.T, c *counter, what string) {
	t.Helper()
	select {
	case <-c.c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no rescan after %s", what)
	}
}

// A file dropped into a watched directory leads to a rescan, long before the periodic one.
func TestRescanOnChange(t *testing.T) {
	dir := t.TempDir()
	c := &counter{c: make(chan struct{}, 1)}
	stop := run(t, c, []string{dir}, &dirwatch.Options{Interval: time.Hour, Quiet: 10 * time.Millisecond})
	// Give the watch time to be set up: a rescan comes only from an event after it.
	i := 0
	if !testkit.Within(10*time.Second, func() bool {
		i++
		if err := os.WriteFile(filepath.Join(dir, "x_v1.0.0"), []byte{byte(i)}, 0o755); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.c:
			return true
		case <-time.After(50 * time.Millisecond):
			return c.count() > 0
		}
	}) {
		t.Fatal("no rescan after writing a file into the directory")
	}
	if err := os.Rename(filepath.Join(dir, "x_v1.0.0"), filepath.Join(dir, "x_v1.1.0")); err != nil {
		t.Fatal(err)
	}
	wait(t, c, "a rename")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A burst of changes (a copy in progress) is one rescan once the directory is quiet.
func TestBurstIsOneRescan(t *testing.T) {
	dir := t.TempDir()
	c := &counter{c: make(chan struct{}, 100)}
	run(t, c, []string{dir}, &dirwatch.Options{Interval: time.Hour, Quiet: 300 * time.Millisecond})
	// A first change, seen, says the watch is set up (one made before it is not seen: a
	// probe is written again until one is, each after the last one's rescan had time).
	if !testkit.Within(10*time.Second, func() bool {
		if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.c:
			return true
		case <-time.After(time.Second):
			return false
		}
	}) {
		t.Fatal("no rescan after writing a file into the directory")
	}
	f, err := os.Create(filepath.Join(dir, "x_v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := time.NewTicker(5 * time.Millisecond) // a write every 5 ms, well within Quiet
	defer chunk.Stop()
	for range 20 {
		if _, err := f.Write([]byte("chunk")); err != nil {
			t.Fatal(err)
		}
		<-chunk.C
	}
	f.Close()
	wait(t, c, "the burst")
	select {
	case <-c.c:
		t.Fatalf("%d rescans for one burst of writes, want 1", c.count()-1)
	case <-time.After(400 * time.Millisecond): // longer than Quiet: a second rescan would have come
	}
}

// Without events (a directory that cannot be watched), the periodic rescan still comes.
func TestPeriodicRescan(t *testing.T) {
	c := &counter{c: make(chan struct{}, 1)}
	run(t, c, []string{filepath.Join(t.TempDir(), "missing")}, &dirwatch.Options{Interval: 20 * time.Millisecond})
	wait(t, c, "the interval")
	wait(t, c, "the second interval")
}

func TestNilContext(t *testing.T) {
	//lint:ignore SA1012 the nil context is the point
	if err := dirwatch.Run(nil, &counter{}, nil, nil); !errors.Is(err, runtime.ErrNilContext) {
		t.Fatalf("Run(nil) = %v", err)
	}
}
