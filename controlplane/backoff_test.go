package controlplane

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// The reliability trial's crash loop, through the daemon: an adapter that exits during
// initialize, sent to by ten clients for 3 s, is started on the backoff schedule (the
// trial saw 5,171 starts in 60 s), each send refused at once meanwhile with why; status
// shows it in backoff with its starts and last failure.
func TestBackoffDaemonCrashLoop(t *testing.T) {
	dir := adapterDir(t)
	copyFile(t, filepath.Join(built, testkit.Versioned.Name), filepath.Join(dir, "crashy_v1.0.0"))
	var logs logBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	sock := startServer(t, ServerConfig{Dirs: []string{dir}, Env: []string{"ADAPTERKIT_TEST_MODE_1.0.0=exit"}, Logger: log})
	ctx := testCtx(t)
	end := time.Now().Add(3 * time.Second)
	var mu sync.Mutex
	var refused int
	var wg sync.WaitGroup
	for range 10 {
		c := dial(t, sock)
		wg.Go(func() {
			every := time.NewTicker(20 * time.Millisecond) // each caller sends every 20 ms
			defer every.Stop()
			for ; time.Now().Before(end); <-every.C {
				_, err := c.Send(ctx, SendParams{Adapter: "crashy", Method: "example.echo.echo", TimeoutMS: 2000})
				if err == nil {
					t.Error("a send to the crashing adapter succeeded")
					return
				}
				if strings.Contains(err.Error(), "not started: restarting after") {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	st, err := dial(t, sock).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Adapters) != 1 {
		t.Fatalf("status lists %d adapters: %+v", len(st.Adapters), st.Adapters)
	}
	a := st.Adapters[0]
	// From 0: one start, then one after 0.1, 0.3, 0.7, 1.5 s (each step up to a fifth
	// shorter, plus the starts themselves): 5 in 3 s, 6 at the most.
	if a.Starts < 3 || a.Starts > 6 || a.FailedStarts != a.Starts || a.Backoff == nil || a.Backoff.Failures != int(a.Starts) ||
		!strings.Contains(a.Backoff.LastError, "exit status 3") || a.Name != "crashy" {
		t.Fatalf("status of the crashing adapter: %+v, backoff %+v", a, a.Backoff)
	}
	if refused == 0 {
		t.Fatal("no send was refused by the backoff")
	}
	if a.State != "backoff" && a.State != "failed" {
		t.Errorf("state %q", a.State)
	}
	// Logged once per start, not once per send: each failure's warning counts the
	// sends refused since the one before.
	text := logs.String()
	if n := strings.Count(text, "[WARN]"); n > 2*int(a.Starts) || !strings.Contains(text, "refused_meanwhile=") {
		t.Errorf("%d warnings for %d starts and %d refused sends:\n%s", n, a.Starts, refused, text)
	}
	t.Logf("%d starts, %d sends refused at once, %d warnings", a.Starts, refused, strings.Count(text, "[WARN]"))
}

// A send that cannot get one of the adapter's slots because every one is held by calls
// whose callers gave up says so through the daemon, as the library's *WedgedError
// does, rather than only that its deadline passed.
func TestWedgedSendSaysWhy(t *testing.T) {
	dir := adapterDir(t)
	copyFile(t, filepath.Join(built, testkit.Versioned.Name), filepath.Join(dir, "deaf_v1.0.0"))
	sock := startServer(t, ServerConfig{Dirs: []string{dir}, Env: []string{"ADAPTERKIT_TEST_MODE_1.0.0=deaf"}})
	ctx := testCtx(t)
	c := dial(t, sock)
	if _, err := c.Send(ctx, SendParams{Adapter: "deaf", Method: "example.echo.echo"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			_, err := c.Send(ctx, SendParams{Adapter: "deaf", Method: "example.echo.sleep", Params: []byte(`{"ms":600000}`), TimeoutMS: 100})
			if d, _ := errorDetails(err); !d.Uncertain {
				t.Errorf("deaf sleep: %v", err)
			}
		})
	}
	wg.Wait()
	_, err := c.Send(ctx, SendParams{Adapter: "deaf", Method: "example.echo.echo", TimeoutMS: 200})
	d, ok := errorDetails(err)
	if !ok || CodeOf(err) != CodeTransportError || !d.NeverStarted || d.AdapterCode != "deadline" ||
		!strings.Contains(err.Error(), "all 32 slots held by calls whose callers gave up") {
		t.Fatalf("send with every slot abandoned: %v (details %+v)", err, d)
	}
}

// errorDetails returns the call details of a control-plane error.
func errorDetails(err error) (CallDetails, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return CallDetails{}, false
	}
	return e.CallDetails()
}
