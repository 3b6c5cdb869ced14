package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	hostrt "github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for an event so that a broken test fails instead of hanging;
// nothing asserts on time.
const wait = 30 * time.Second

// install copies adapter.py into a fresh directory as an executable named by the
// discovery convention and returns its path and the environment it needs: a PATH in
// which its shebang finds python3. It skips the test where that cannot work.
func install(t *testing.T) (string, []string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a script cannot be an adapter on Windows: only an .exe is launched (R62)")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	src, err := os.ReadFile("adapter.py")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pyecho_v0.1.0")
	if err := os.WriteFile(path, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, []string{"PATH=" + filepath.Dir(py) + string(filepath.ListSeparator) + os.Getenv("PATH")}
}

func TestThroughLifecycle(t *testing.T) {
	path, env := install(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a, err := lifecycle.Open(ctx, lifecycle.Config{Path: path, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = a.Close()
		}
	}()
	// R19-R25: the catalog passed the host's validation.
	s, ok := a.Catalog().Service("example.pyecho")
	if !ok || s.Version != 1 || len(s.Methods) != 3 {
		t.Fatalf("catalog: %+v", a.Catalog())
	}

	for _, tc := range []struct {
		method, params, want string
	}{
		{"example.pyecho.echo", `{"a":[1,"x",{"b":null}],"é":true}`, `{"a":[1,"x",{"b":null}],"é":true}`},
		{"example.pyecho.echo", `{}`, `{}`},
		{"example.pyecho.upper", `{"text":"hello, straße"}`, `{"text":"HELLO, STRASSE"}`},
		{"example.pyecho.sleep", `{"ms":1}`, `{"ms":1}`},
	} {
		t.Run(tc.method+" "+tc.params, func(t *testing.T) {
			got, err := a.Call(ctx, tc.method, json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Fatalf("result %s, want %s", got, tc.want)
			}
		})
	}

	t.Run("bad params", func(t *testing.T) {
		for _, p := range []string{`{"text":1}`, `{"text":"a","more":1}`, `{}`} {
			_, err := a.Call(ctx, "example.pyecho.upper", json.RawMessage(p))
			if !errors.Is(err, hostrt.ErrInvalid) || hostrt.IsUncertain(err) {
				t.Fatalf("upper %s: %v, want invalid", p, err)
			}
		}
	})

	// R41: the host refuses a method the catalog does not advertise; nothing is sent.
	t.Run("unknown method", func(t *testing.T) {
		_, err := a.Call(ctx, "example.pyecho.nope", nil)
		if !errors.Is(err, hostrt.ErrUnavailable) || !hostrt.IsNeverStarted(err) {
			t.Fatalf("unknown method: %v", err)
		}
	})

	// R36-R39: a cancelled sleep returns aborted and uncertain at once; the adapter
	// answers the cancel and the identity's slot is freed.
	t.Run("cancel", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := a.Call(cctx, "example.pyecho.sleep", json.RawMessage(`{"ms":30000}`))
			done <- err
		}()
		waitFor(t, "the sleep to be in flight", func() bool { return a.InFlight() == 1 })
		ccancel()
		if err := <-done; !errors.Is(err, hostrt.ErrAborted) || !hostrt.IsUncertain(err) {
			t.Fatalf("cancelled sleep: %v", err)
		}
		waitFor(t, "the adapter to answer the cancel", func() bool { return a.InFlight() == 0 })
	})

	// R47, R49, R63: the adapter exits on end of input and its tree is proven gone.
	closed = true
	if err := a.Close(); err != nil {
		t.Fatalf("close not verified: %v", err)
	}
	if a.Err() == nil || !errors.Is(a.Err(), hostrt.ErrConnClosed) {
		t.Fatalf("connection cause %v, want closed by the host", a.Err())
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawAdapter is the Python adapter on plain pipes, driven frame by frame.
type rawAdapter struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	frames chan []byte   // every frame the adapter wrote; closed at the end of its output
	outErr chan error    // why its output ended: nil for a clean end between frames
	exited chan struct{} // closed when the process has been reaped
}

func startRaw(t *testing.T) *rawAdapter {
	t.Helper()
	path, env := install(t)
	cmd := exec.Command(path)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawAdapter{t: t, cmd: cmd, in: in, frames: make(chan []byte, 64), outErr: make(chan error, 1), exited: make(chan struct{})}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		fr := wire.NewReader(out, limits.MaxFrameSize)
		for {
			p, err := fr.ReadFrame()
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				r.outErr <- err
				close(r.frames)
				return
			}
			r.frames <- bytes.Clone(p)
		}
	}()
	go func() {
		<-readDone // Wait closes stdout: read everything first
		_ = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-r.exited:
		case <-time.After(wait):
			_ = cmd.Process.Kill()
			<-r.exited
			t.Error("the adapter did not exit after its input ended")
		}
	})
	return r
}

func (r *rawAdapter) send(payload string) {
	r.t.Helper()
	if err := wire.WriteFrame(r.in, []byte(payload), 0); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func request(id uint64, method, params string) string {
	return `{"type":"request","v":1,"id":` + strconv.FormatUint(id, 10) + `,"method":"` + method + `","params":` + params + `}`
}

func initialize(id uint64) string {
	return request(id, wire.MethodInitialize, `{"protocol":1,"configuration":{}}`)
}

// recv returns the next reply, which must be a valid adapter envelope (R6, R9-R14).
func (r *rawAdapter) recv() wire.Message {
	r.t.Helper()
	select {
	case p, ok := <-r.frames:
		if !ok {
			r.t.Fatalf("the adapter's output ended: %v", <-r.outErr)
		}
		m, err := wire.DecodeAdapterMessage(p)
		if err != nil {
			r.t.Fatalf("invalid envelope %s: %v", p, err)
		}
		return m
	case <-time.After(wait):
		r.t.Fatal("no reply")
	}
	return wire.Message{}
}

// wantError receives the next reply and checks it is an error for id with code.
func (r *rawAdapter) wantError(id uint64, code wire.Code) wire.Message {
	r.t.Helper()
	m := r.recv()
	if m.Type != wire.TypeError || m.ID != id || m.RawCode != string(code) {
		r.t.Fatalf("reply %+v, want error %s for id %d", m, code, id)
	}
	return m
}

// The adapter's side of the protocol, exchange by exchange.
func TestProtocol(t *testing.T) {
	r := startRaw(t)
	// R27: a request before initialize is refused.
	r.send(request(1, "example.pyecho.echo", `{}`))
	r.wantError(1, wire.CodeInvalid)

	// R19: initialize is answered with a valid catalog.
	r.send(initialize(2))
	m := r.recv()
	if m.Type != wire.TypeResult || m.ID != 2 {
		t.Fatalf("initialize: %+v", m)
	}
	if _, err := wire.DecodeCatalog(m.Value); err != nil {
		t.Fatalf("catalog: %v", err)
	}

	// A7: a second initialize is refused.
	r.send(initialize(3))
	r.wantError(3, wire.CodeInvalid)

	// R12, A4: unknown top-level fields are refused and the request is not executed;
	// so are missing fields and a wrong v.
	r.send(`{"type":"request","v":1,"id":4,"method":"example.pyecho.upper","params":{"text":"a"},"extra":1}`)
	r.wantError(4, wire.CodeInvalid)
	r.send(`{"type":"request","v":1,"id":5,"method":"example.pyecho.echo"}`)
	r.wantError(5, wire.CodeInvalid)
	r.send(`{"type":"request","v":2,"id":6,"method":"example.pyecho.echo","params":{}}`)
	r.wantError(6, wire.CodeInvalid)

	// R42: a method it does not serve.
	r.send(request(7, "example.pyecho.nope", `{}`))
	if m := r.wantError(7, wire.CodeUnavailable); m.Message != wire.MessageUnknownMethod {
		t.Fatalf("unknown method message %q", m.Message)
	}

	// R37: a cancel for an unknown id, and a malformed one, get no reply; the next
	// request is answered normally.
	r.send(`{"type":"cancel","v":1,"id":99}`)
	r.send(`{"type":"cancel","v":1,"id":8,"extra":true}`)
	r.send(request(8, "example.pyecho.upper", `{"text":"ok"}`))
	if m := r.recv(); m.Type != wire.TypeResult || m.ID != 8 || string(m.Value) != `{"text":"OK"}` {
		t.Fatalf("upper: %+v", m)
	}

	// R40: 32 requests in flight; the 33rd is answered busy at once. R38: cancelled,
	// each answers aborted.
	const first = 100
	for i := range uint64(limits.MaxInFlight) {
		r.send(request(first+i, "example.pyecho.sleep", `{"ms":30000}`))
	}
	r.send(request(first+limits.MaxInFlight, "example.pyecho.sleep", `{"ms":30000}`))
	if m := r.wantError(first+limits.MaxInFlight, wire.CodeBusy); m.Message == "" {
		t.Fatal("busy without a message")
	}
	for i := range uint64(limits.MaxInFlight) {
		r.send(`{"type":"cancel","v":1,"id":` + strconv.FormatUint(first+i, 10) + `}`)
	}
	seen := make(map[uint64]bool)
	for range limits.MaxInFlight {
		m := r.recv()
		if m.Type != wire.TypeError || m.Code != wire.CodeAborted || m.ID < first || m.ID >= first+limits.MaxInFlight || seen[m.ID] {
			t.Fatalf("reply to a cancelled sleep: %+v", m)
		}
		seen[m.ID] = true // R16: exactly one reply per request
	}

	// R49: at the end of input the adapter exits, having written nothing else.
	r.in.Close()
	select {
	case <-r.exited:
	case <-time.After(wait):
		t.Fatal("the adapter did not exit after its input ended")
	}
	if _, ok := <-r.frames; ok {
		t.Fatal("a frame after the last reply")
	}
	if err := <-r.outErr; err != nil {
		t.Fatalf("output: %v", err)
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after a clean disconnect", code)
	}
}

// A28, A14, R4: host faults that cannot be tied to a request end the connection: the
// adapter exits with status 1 without replying.
func TestHostViolations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame func(r *rawAdapter)
	}{
		{"zero-length frame", func(r *rawAdapter) { _, _ = r.in.Write([]byte{0, 0, 0, 0}) }},
		{"oversized length", func(r *rawAdapter) { _, _ = r.in.Write([]byte{0, 0x40, 0, 1}) }},
		{"not JSON", func(r *rawAdapter) { r.send(`{"type":`) }},
		{"a result from the host", func(r *rawAdapter) { r.send(`{"type":"result","v":1,"id":2,"value":1}`) }},
		{"a request without id", func(r *rawAdapter) { r.send(`{"type":"request","v":1,"method":"a.b","params":{}}`) }},
		{"id 1.0", func(r *rawAdapter) { r.send(`{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}`) }},
		{"id not increasing", func(r *rawAdapter) { r.send(request(1, "example.pyecho.echo", `{}`)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRaw(t)
			r.send(initialize(1))
			if m := r.recv(); m.Type != wire.TypeResult {
				t.Fatalf("initialize: %+v", m)
			}
			tc.frame(r)
			select {
			case <-r.exited:
			case <-time.After(wait):
				t.Fatal("the adapter did not end the connection")
			}
			if p, ok := <-r.frames; ok {
				t.Fatalf("reply to a violation: %s", p)
			}
			if code := r.cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit code %d, want 1", code)
			}
		})
	}
}
