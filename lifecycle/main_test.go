//go:build linux

package lifecycle_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/runtime/wire"
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
	switch mode {
	case "stubborn":
		stubborn()
		return
	case "badcatalog":
		svc := plugin.NewService("test.proc", 1)
		plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { return empty{}, nil })
		// Answer initialize by hand with a catalog that breaks R21.
		r := wire.NewReader(os.Stdin, 0)
		if _, err := r.ReadFrame(); err != nil {
			os.Exit(1)
		}
		_ = wire.WriteFrame(os.Stdout, wire.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"system.x","version":1,"methods":["system.x.y"]}]}`)), 0)
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	svc := plugin.NewService("test.proc", 1)
	plugin.Handle(svc, "test.proc.ok", func(context.Context, empty) (empty, error) { return empty{}, nil })
	// pid is the adapter's pid as the host sees it: the adapter may be in its own PID
	// namespace, where getpid says 1, while /proc is the host's.
	plugin.Handle(svc, "test.proc.pid", func(context.Context, empty) (int, error) {
		s, err := os.Readlink("/proc/self")
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(s)
	})
	plugin.Handle(svc, "test.proc.exit", func(_ context.Context, p struct {
		Code int `json:"code"`
	}) (empty, error) {
		os.Exit(p.Code)
		return empty{}, nil
	})
	// spawn starts a grandchild that inherits stdout (so it holds the pipe) and,
	// with setsid, leaves the adapter's session and process group; it returns its pid.
	plugin.Handle(svc, "test.proc.spawn", func(_ context.Context, p struct {
		Setsid bool `json:"setsid"`
	}) (int, error) {
		cmd := exec.Command("/bin/sleep", "1000")
		cmd.Stdout = os.NewFile(uintptr(syscall.Stdout), "stdout")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: p.Setsid}
		if err := cmd.Start(); err != nil {
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

// stubborn answers initialize and then ignores stdin EOF: it must be killed after the
// disconnect grace.
func stubborn() {
	r := wire.NewReader(os.Stdin, 0)
	if _, err := r.ReadFrame(); err != nil {
		os.Exit(1)
	}
	_ = wire.WriteFrame(os.Stdout, wire.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"test.proc","version":1,"methods":["test.proc.ok"]}]}`)), 0)
	signalIgnore()
	for {
		if _, err := r.ReadFrame(); err != nil {
			time.Sleep(time.Hour)
		}
	}
}

func signalIgnore() { signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE) }

// alive reports whether pid names a running (not zombie) process, read from /proc
// rather than from the code under test.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// childrenOf lists the pids whose parent is pid, read from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// waitGone waits (bounded) until no pid is alive.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still running: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

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
