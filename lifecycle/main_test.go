package lifecycle_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// The test binary doubles as the adapters these tests start: with ADAPTERKIT_TEST_ADAPTER
// set in its (explicit) environment it serves the mode named there instead of testing.
const modeEnv = "ADAPTERKIT_TEST_ADAPTER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(modeEnv); mode != "" {
		serveTestAdapter(mode)
		return
	}
	goleak.VerifyTestMain(m)
}

// self is the path of the test binary, the executable of every test adapter.
func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func env(mode string, extra ...string) []string {
	return append([]string{modeEnv + "=" + mode}, extra...)
}

type empty struct{}

func serveTestAdapter(mode string) {
	if f := observeModes[mode]; f != nil {
		f()
		return
	}
	switch mode {
	case "stubborn":
		stubborn()
		return
	case "sleep": // a grandchild: stays until killed
		testkit.BlockForever()
	case "badcatalog":
		svc := plugin.NewService("test.proc", 1)
		plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { return empty{}, nil })
		// A tree, not one process: a detached grandchild (setsid on Unix) holding
		// stdout. Both host-side pids go to the pid file (if any) before the handshake,
		// for the test to check.
		if _, err := sleeper(true); err != nil {
			os.Exit(1)
		}
		if name := os.Getenv("ADAPTERKIT_TEST_PIDFILE"); name != "" {
			me := hostPid()
			// The grandchild's host-side pid: the child the system lists.
			line := strconv.Itoa(me)
			for _, k := range testkit.Children(me) {
				line += " " + strconv.Itoa(k)
			}
			if err := os.WriteFile(name, []byte(line+"\n"), 0o600); err != nil {
				os.Exit(1)
			}
		}
		// Answer initialize by hand with a catalog that breaks R21.
		r := proto.NewReader(os.Stdin, 0)
		if _, err := r.ReadFrame(); err != nil {
			os.Exit(1)
		}
		frame, _ := proto.AppendFrame(nil, proto.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"system.x","version":1,"methods":["system.x.y"]}]}`)), 0, false)
		_, _ = os.Stdout.Write(frame)
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	svc := plugin.NewService("test.proc", 1)
	plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { return empty{}, nil })
	// pid is the adapter's pid as the host sees it: the adapter may be in its own PID
	// namespace, where getpid says 1, while /proc is the host's.
	plugin.Handle(svc, "test.proc.pid", func(context.Context, empty) (int, error) { return hostPid(), nil })
	plugin.Handle(svc, "test.proc.exit", func(_ context.Context, p struct {
		Code int `json:"code"`
	}) (empty, error) {
		os.Exit(p.Code)
		return empty{}, nil
	})
	// spawn starts a grandchild that inherits stdout (so it holds the pipe) and, with
	// setsid, leaves the adapter's session and process group (on Windows: detached, in
	// a process group of its own); it returns its pid.
	plugin.Handle(svc, "test.proc.spawn", func(_ context.Context, p struct {
		Setsid bool `json:"setsid"`
	}) (int, error) {
		cmd, err := sleeper(p.Setsid)
		if err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	plugin.Handle(svc, "test.proc.hang", func(ctx context.Context, _ empty) (empty, error) {
		<-ctx.Done()
		return empty{}, plugin.Errorf(wire.CodeAborted, "canceled")
	})
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}

// sleeper starts the test binary as a "sleep" grandchild that holds the adapter's
// stdout; detach moves it out of the adapter's session and process group.
func sleeper(detach bool) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{modeEnv + "=sleep", "GORACE=atexit_sleep_ms=0"}
	cmd.Stdout = os.Stdout
	if detach {
		cmd.SysProcAttr = detachAttr()
	}
	return cmd, cmd.Start()
}

// stubborn answers initialize and then ignores stdin EOF: it must be killed after the
// disconnect grace.
func stubborn() {
	r := proto.NewReader(os.Stdin, 0)
	if _, err := r.ReadFrame(); err != nil {
		os.Exit(1)
	}
	frame, _ := proto.AppendFrame(nil, proto.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"test.proc","version":1,"methods":["test.proc.ok"]}]}`)), 0, false)
	_, _ = os.Stdout.Write(frame)
	signalIgnore()
	for {
		if _, err := r.ReadFrame(); err != nil {
			testkit.BlockForever()
		}
	}
}

func signalIgnore() { signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE) }

func alive(pid int) bool { return testkit.Running(pid) }

func childrenOf(_ *testing.T, pid int) []int { return testkit.Children(pid) }

// waitGone polls the system until pids end: for processes that end by themselves (an
// adapter that exits, before a restart), never after a verified cleanup.
func waitGone(t *testing.T, pids ...int) { t.Helper(); testkit.WaitGone(t, 5*time.Second, pids...) }

// goneNow asserts from the system's process table that none of pids runs: a verified
// cleanup means gone at the moment it was reported, with no grace period.
func goneNow(t *testing.T, pids ...int) { t.Helper(); testkit.Gone(t, pids...) }

func mustInt(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		t.Fatalf("not an int: %s", raw)
	}
	return n
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
