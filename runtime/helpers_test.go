package runtime_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for an event, only so that a broken test fails instead of
// hanging; nothing asserts on time.
const wait = 10 * time.Second

const (
	initFrame  = `{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`
	catalog    = `{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read","example.device.write"]}]}`
	initResult = `{"type":"result","v":1,"id":1,"value":` + catalog + `}`
	read       = "example.device.read"
)

type pipeKind string

const (
	ioPipe pipeKind = "io.Pipe"
	osPipe pipeKind = "os.Pipe"
)

var pipeKinds = []pipeKind{ioPipe, osPipe}

// fake is a scripted adapter: it reads the host's frames with proto.Reader and writes
// exact bytes back.
type fake struct {
	t     testing.TB
	in    *proto.Reader  // frames from the host (the adapter's stdin)
	inRaw io.Reader      // the adapter's stdin, unbuffered
	inEnd io.Closer      // the adapter's end of stdin
	out   io.WriteCloser // the adapter's stdout
}

// newConn connects a Conn to a fake adapter over a pair of pipes. The Conn is closed and
// the fake's ends are closed when the test ends.
func newConn(t testing.TB, kind pipeKind, opts *runtime.Options) (*runtime.Conn, *fake) {
	t.Helper()
	var hostR, adapterR io.ReadCloser
	var hostW, adapterW io.WriteCloser
	switch kind {
	case ioPipe:
		hostR, adapterW = io.Pipe()
		adapterR, hostW = io.Pipe()
	case osPipe:
		r1, w1, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r2, w2, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		hostR, adapterW, adapterR, hostW = r1, w1, r2, w2
	}
	c := runtime.NewConn(hostR, hostW, opts)
	f := &fake{t: t, in: proto.NewReader(adapterR, 0), inRaw: adapterR, inEnd: adapterR, out: adapterW}
	t.Cleanup(func() {
		_ = adapterW.Close()
		_ = adapterR.Close()
		c.Close()
	})
	return c, f
}

// next returns the next frame the host wrote.
func (f *fake) next() string {
	f.t.Helper()
	type res struct {
		p   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		p, err := f.in.ReadFrame()
		ch <- res{p, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			f.t.Fatalf("fake adapter: reading a frame: %v", r.err)
		}
		return string(r.p)
	case <-time.After(wait):
		f.t.Fatal("fake adapter: no frame from the host")
	}
	return ""
}

// eof waits for the end of the host's output (the adapter's stdin).
func (f *fake) eof() error {
	f.t.Helper()
	ch := make(chan error, 1)
	go func() {
		for {
			if _, err := f.in.ReadFrame(); err != nil {
				ch <- err
				return
			}
		}
	}()
	select {
	case err := <-ch:
		return err
	case <-time.After(wait):
		f.t.Fatal("fake adapter: stdin did not end")
	}
	return nil
}

// expect reads the next frame and checks its exact bytes.
func (f *fake) expect(want string) {
	f.t.Helper()
	if got := f.next(); got != want {
		f.t.Fatalf("host sent\n  %s\nwant\n  %s", got, want)
	}
}

// send writes payload as one frame, byte for byte.
func (f *fake) send(payload string) {
	f.t.Helper()
	f.sendRaw(frame(payload))
}

// sendRaw writes raw bytes to the host. Errors are ignored: after a violation the host
// has closed its end.
func (f *fake) sendRaw(b []byte) { _, _ = f.out.Write(b) }

func frame(payload string) []byte {
	b := make([]byte, 4, 4+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// handshake answers initialize with the test catalog.
func (f *fake) handshake(c *runtime.Conn) {
	f.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Initialize(context.Background(), nil)
		done <- err
	}()
	f.expect(initFrame)
	f.send(initResult)
	if err := recv(f.t, done); err != nil {
		f.t.Fatalf("Initialize: %v", err)
	}
}

type result struct {
	v   json.RawMessage
	err error
}

// goCall runs a call in a goroutine.
func goCall(ctx context.Context, c *runtime.Conn, method, params string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		var p json.RawMessage
		if params != "" {
			p = json.RawMessage(params)
		}
		v, err := c.Call(ctx, method, p)
		ch <- result{v, err}
	}()
	return ch
}

// recv waits for one value.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("timed out waiting")
	}
	var zero T
	return zero
}

// ended waits for the connection to end and returns its cause.
func ended(t testing.TB, c *runtime.Conn) error {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("connection did not end")
	}
	err := c.Err()
	if err == nil {
		t.Fatal("Err() is nil after Done")
	}
	return err
}

// eventually polls cond (for state without an event to wait on, such as InFlight).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, wait, cond, "never happened: %s", what)
}

// callError asserts err is a *runtime.CallError and returns it.
func callError(t testing.TB, err error) *runtime.CallError {
	t.Helper()
	var ce *runtime.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CallError", err, err)
	}
	return ce
}

// checkOutcome checks the code and outcome flags of a call error.
func checkOutcome(t testing.TB, err error, code wire.Code, uncertain, neverStarted bool) *runtime.CallError {
	t.Helper()
	ce := callError(t, err)
	if runtime.CodeOf(err) != code {
		t.Errorf("error %v: code %s, want %v", err, ce.Code, code)
	}
	if runtime.IsUncertain(err) != uncertain {
		t.Errorf("error %v: uncertain %v, want %v", err, ce.Uncertain, uncertain)
	}
	if runtime.IsNeverStarted(err) != neverStarted {
		t.Errorf("error %v: never started %v, want %v", err, ce.NeverStarted, neverStarted)
	}
	return ce
}

func request(id int, method, params string) string {
	return `{"type":"request","v":1,"id":` + itoa(id) + `,"method":"` + method + `","params":` + params + `}`
}

func resultFrame(id int, value string) string {
	return `{"type":"result","v":1,"id":` + itoa(id) + `,"value":` + value + `}`
}

func errorFrame(id int, code, message string) string {
	return `{"type":"error","v":1,"id":` + itoa(id) + `,"code":"` + code + `","message":"` + message + `"}`
}

func cancelFrame(id int) string { return `{"type":"cancel","v":1,"id":` + itoa(id) + `}` }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
