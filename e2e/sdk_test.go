package e2e

// The language SDKs of sdk/ are held to the Go SDK's conformance: each SDK's echo adapter
// (the examples/echo service written with that SDK) must pass `adapterctl check`, round-trip
// the exactness cases through the host, turn a cancel into a cancellation, answer the 33rd
// concurrent request busy, survive stray output on stdout, and leave nothing running.
//
// `make test` builds the SDK echo adapters first (`make adapters`) and names their directory
// in $ADAPTERKIT_SDK_ADAPTERS (a relative path is taken from the repository root, where
// `make adapters` runs). `make adapters` leaves out the adapter of an SDK whose toolchain
// or dependencies the machine lacks (and says so, and `make test` lists it at its end):
// that adapter's subtests are skipped, unless $ADAPTERKIT_REQUIRE_SDKS names its language
// (CI names all three), where its absence fails the test. Without
// $ADAPTERKIT_SDK_ADAPTERS, the test builds the Python one itself (when python3 is
// installed) and skips the others.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// sdkWait bounds every wait so that a broken test fails instead of hanging.
const sdkWait = 30 * time.Second

// sdkStrayEnv makes every SDK echo print to stdout in example.echo.echo (R6 tests).
const sdkStrayEnv = "ADAPTERKIT_ECHO_STRAY_STDOUT=1"

// sdkEchoes are the SDK echo adapters by discovery name, with the file `make adapters`
// builds for each.
var sdkEchoes = []struct{ name, file, lang string }{
	{"pyecho", "pyecho_v1.0.0", "python"},
	{"tsecho", "tsecho_v1.0.0", "typescript"},
	{"rsecho", "rsecho_v1.0.0", "rust"},
}

type sdkEcho struct {
	name, path string
	env        []string // PATH, so that a script's shebang finds its interpreter
	missing    string   // why the adapter is not there: its subtests skip
}

// sdkRequired reports whether $ADAPTERKIT_REQUIRE_SDKS (comma-separated languages, or
// "all") names lang.
func sdkRequired(lang string) bool {
	for _, l := range strings.Split(os.Getenv("ADAPTERKIT_REQUIRE_SDKS"), ",") {
		if l = strings.TrimSpace(l); l == lang || l == "all" {
			return true
		}
	}
	return false
}

// sdkAdapters returns the SDK echo adapters to test.
func sdkAdapters(t *testing.T) []sdkEcho {
	t.Helper()
	if goruntime.GOOS == "windows" {
		t.Skip("script adapters cannot run on Windows, where only an .exe is launched (R62)")
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	var out []sdkEcho
	if dir := sdkAdapterDir(); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range sdkEchoes {
			p := filepath.Join(abs, e.file)
			a := sdkEcho{name: e.name, path: p, env: env}
			if _, err := os.Stat(p); err != nil {
				if sdkRequired(e.lang) {
					t.Fatalf("%s: %v (ADAPTERKIT_REQUIRE_SDKS names %s; run `make adapters`)", e.name, err, e.lang)
				}
				a.missing = fmt.Sprintf("%s was not built (`make adapters` says why): %v", e.name, err)
			}
			out = append(out, a)
		}
		return out
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no SDK adapters: set ADAPTERKIT_SDK_ADAPTERS (make adapters) or install python3")
	}
	p := filepath.Join(t.TempDir(), "pyecho_v1.0.0")
	cmd := exec.Command(py, "../sdk/python/tools/build_adapter.py", "../sdk/python/examples/echo.py", p)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building pyecho: %v\n%s", err, b)
	}
	t.Log("ADAPTERKIT_SDK_ADAPTERS is not set: testing pyecho only")
	return append(out, sdkEcho{name: "pyecho", path: p, env: env})
}

// sdkAdapterDir is $ADAPTERKIT_SDK_ADAPTERS, a relative path taken from the repository
// root (the tests run in e2e/), or "".
func sdkAdapterDir() string {
	dir := os.Getenv("ADAPTERKIT_SDK_ADAPTERS")
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir)
	}
	return dir
}

// forEachSDK runs f as a subtest per SDK echo adapter.
func forEachSDK(t *testing.T, f func(t *testing.T, a sdkEcho)) {
	for _, a := range sdkAdapters(t) {
		t.Run(a.name, func(t *testing.T) {
			if a.missing != "" {
				t.Skip(a.missing)
			}
			f(t, a)
		})
	}
}

// Every check of `adapterctl check` passes (the leftovers proof may only be skipped
// where the platform cannot give it).
func TestSDKCheck(t *testing.T) {
	ctl := buildBinT(t, "cmd/adapterctl")
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := []string{"check", "--json"}
		for _, kv := range a.env {
			args = append(args, "--env", kv)
		}
		cmd := exec.CommandContext(ctx, ctl, append(args, a.path)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("adapterctl check: %v\n%s\n%s", err, out, stderr.String())
		}
		var res struct {
			Passed bool `json:"passed"`
			Checks []struct {
				Name, Status, Detail string
			} `json:"checks"`
			CleanupVerified bool `json:"cleanup_verified"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !res.Passed || !res.CleanupVerified || len(res.Checks) == 0 {
			t.Errorf("passed=%v cleanup_verified=%v", res.Passed, res.CleanupVerified)
		}
		for _, c := range res.Checks {
			if c.Status != "pass" && !(c.Status == "skip" && c.Name == "nothing left running") {
				t.Errorf("check %q: %s: %s", c.Name, c.Status, c.Detail)
			}
		}
	})
}

// openSDK opens an SDK echo through a registry, as a host does.
func openSDK(t *testing.T, a sdkEcho, extraEnv ...string) (*registry.Registry, *registry.Handle) {
	t.Helper()
	reg := registry.New(&registry.Config{Env: append(append([]string(nil), a.env...), extraEnv...)})
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	h, err := reg.Open(ctx, a.path, nil)
	if err != nil {
		_ = reg.Close(context.Background())
		t.Fatalf("open %s: %v", a.name, err)
	}
	return reg, h
}

// closeSDK closes the registry and requires every process tree proven gone (R63, R64).
func closeSDK(t *testing.T, reg *registry.Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	if err := reg.Close(ctx); err != nil {
		t.Fatalf("close not verified: %v", err)
	}
}

// sdkExactParams are the exactness cases: integers at the int64 and uint64 limits and
// past 2^53, floats whose every digit matters, strings with every escape, U+2028/9 and
// astral characters, raw and escaped.
const sdkExactParams = `{"int64":[9223372036854775807,-9223372036854775808],"uint64":18446744073709551615,` +
	`"p53":9007199254740993,"n53":-9007199254740993,` +
	`"floats":[0.1,1.7976931348623157e+308,5e-324,0.3333333333333333,-0.5,1e21],` +
	`"escapes":"\"\\\/\b\f\n\r\t\u0000\u001f\u007f","lsps":"\u2028\u2029 ` + "\u2028\u2029" + `",` +
	`"astral":"\ud83d\ude00 ` + "😀 𝄞" + `","nested":{"a":[[],{},null,true,false,""]}}`

// The host round-trips the exactness cases through every SDK's echo unchanged: numbers
// keep their literal digits, strings their characters.
func TestSDKExactness(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a)
		defer closeSDK(t, reg)
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		got, err := h.Call(ctx, "example.echo.echo", json.RawMessage(sdkExactParams))
		if err != nil {
			t.Fatal(err)
		}
		if same, err := testkit.SameJSON(got, []byte(sdkExactParams)); err != nil || !same {
			t.Fatalf("echo changed the value:\n got %s\nwant %s", got, sdkExactParams)
		}
		// A big value too: 1 MiB of big, and echo of an 1 MiB string.
		big, err := h.Call(ctx, "example.echo.big", json.RawMessage(`{"bytes":1048576}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(big) != 1<<20+2 || string(big[:3]) != `"xx` {
			t.Fatalf("big: %d bytes", len(big))
		}
		if _, err := h.Call(ctx, "example.echo.big", json.RawMessage(`{"bytes":4194304}`)); runtime.CodeOf(err) != wire.CodeInvalid {
			t.Fatalf("big beyond the frame: %v, want invalid", err)
		}
	})
}

// Error replies: a known code is kept, an unknown one becomes failed (R28), a long
// message is capped at 4096 bytes on a character boundary (R30), an unknown method never
// reaches the adapter (R41).
func TestSDKErrors(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a)
		defer closeSDK(t, reg)
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		long := string(bytes.Repeat([]byte("é"), 3000))
		for _, tc := range []struct {
			code, message string
			want          wire.Code
			wantMsg       string
		}{
			{"denied", "not for you", wire.CodeDenied, "not for you"},
			{"Busy", "x", wire.CodeFailed, "x"},
			{"failed", long, wire.CodeFailed, long[:4096]},
		} {
			params, _ := json.Marshal(map[string]string{"code": tc.code, "message": tc.message})
			_, err := h.Call(ctx, "example.echo.fail", params)
			if runtime.CodeOf(err) != tc.want || runtime.IsUncertain(err) {
				t.Fatalf("fail %s: %v, want %v", tc.code, err, tc.want)
			}
			var ce *runtime.CallError
			if !errors.As(err, &ce) || ce.Message != tc.wantMsg {
				t.Fatalf("fail %s: message %q", tc.code, shortMsg(err))
			}
		}
		if _, err := h.Call(ctx, "example.echo.sleep", json.RawMessage(`{"ms":"1"}`)); runtime.CodeOf(err) != wire.CodeInvalid {
			t.Fatalf("sleep with a string: %v, want invalid", err)
		}
	})
}

func shortMsg(err error) string {
	s := err.Error()
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// A caller's cancellation reaches the adapter as a cancel, and the adapter answers it
// as a cancellation (aborted), through the host (R36-R39).
func TestSDKCancelThroughHost(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a)
		defer closeSDK(t, reg)
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := h.Call(cctx, "example.echo.sleep", json.RawMessage(`{"ms":30000}`))
			done <- err
		}()
		testkit.Eventually(t, sdkWait, func() bool { return h.Status().InFlight > 0 }, "the request was never sent")
		ccancel()
		select {
		case err := <-done:
			if runtime.CodeOf(err) != wire.CodeAborted {
				t.Fatalf("cancelled sleep: %v, want aborted", err)
			}
		case <-time.After(sdkWait):
			t.Fatal("the cancelled call did not return")
		}
		// The adapter still answers: the cancel did not break anything.
		if _, err := h.Call(ctx, "example.echo.sleep", json.RawMessage(`{"ms":1}`)); err != nil {
			t.Fatal(err)
		}
	})
}

// R6: stray output on stdout (print and a raw write to fd 1) does not reach the
// protocol stream: calls keep succeeding and the close is clean.
func TestSDKStrayStdout(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		reg, h := openSDK(t, a, sdkStrayEnv)
		defer closeSDK(t, reg)
		ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
		defer cancel()
		for i := range 3 {
			p := json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)
			got, err := h.Call(ctx, "example.echo.echo", p)
			if err != nil {
				t.Fatalf("call %d after stray output: %v", i, err)
			}
			if string(got) != string(p) {
				t.Fatalf("echo %s, want %s", got, p)
			}
		}
	})
}

// rawSDK is an SDK adapter on plain pipes, driven frame by frame.
type rawSDK struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	frames chan []byte   // every frame the adapter wrote; closed at the end of its output
	outErr chan error    // why its output ended: nil for a clean end between frames
	exited chan struct{} // closed when the process has been reaped
}

func startRawSDK(t *testing.T, a sdkEcho, extraEnv ...string) *rawSDK {
	t.Helper()
	cmd := exec.Command(a.path)
	cmd.Env = append(append([]string(nil), a.env...), extraEnv...)
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
	r := &rawSDK{t: t, cmd: cmd, in: in, frames: make(chan []byte, 64), outErr: make(chan error, 1), exited: make(chan struct{})}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		fr := proto.NewReader(out, limits.MaxFrameSize)
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
		case <-time.After(sdkWait):
			_ = cmd.Process.Kill()
			<-r.exited
			t.Error("the adapter did not exit after its input ended")
		}
	})
	return r
}

func (r *rawSDK) send(payload string) {
	r.t.Helper()
	frame, err := proto.AppendFrame(nil, []byte(payload), 0, false)
	if err == nil {
		_, err = r.in.Write(frame)
	}
	if err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func sdkRequest(id uint64, method, params string) string {
	return `{"type":"request","v":1,"id":` + strconv.FormatUint(id, 10) + `,"method":"` + method + `","params":` + params + `}`
}

func sdkCancel(id uint64) string {
	return `{"type":"cancel","v":1,"id":` + strconv.FormatUint(id, 10) + `}`
}

func (r *rawSDK) initialize(id uint64) {
	r.t.Helper()
	r.send(sdkRequest(id, proto.MethodInitialize, `{"protocol":1,"configuration":{}}`))
	if m := r.recv(); m.Type != proto.TypeResult || m.ID != id {
		r.t.Fatalf("initialize: %+v", m)
	}
}

// recv returns the next reply, which must be a valid adapter envelope (R6, R9-R14).
func (r *rawSDK) recv() proto.Message {
	r.t.Helper()
	select {
	case p, ok := <-r.frames:
		if !ok {
			r.t.Fatalf("the adapter's output ended: %v", <-r.outErr)
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			r.t.Fatalf("invalid envelope %s: %v", p, err)
		}
		return m
	case <-time.After(sdkWait):
		r.t.Fatal("no reply")
	}
	return proto.Message{}
}

func (r *rawSDK) wantError(id uint64, code wire.Code) proto.Message {
	r.t.Helper()
	m := r.recv()
	if m.Type != proto.TypeError || m.ID != id || m.RawCode != string(code) {
		r.t.Fatalf("reply %+v, want error %s for id %d", m, code, id)
	}
	return m
}

// waitExit waits for the process to end and returns how long that took.
func (r *rawSDK) waitExit() time.Duration {
	r.t.Helper()
	start := time.Now()
	select {
	case <-r.exited:
	case <-time.After(sdkWait):
		r.t.Fatal("the adapter did not exit")
	}
	return time.Since(start)
}

// The adapter's side of the protocol, exchange by exchange, the same for every SDK.
func TestSDKProtocol(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		r := startRawSDK(t, a)
		r.send(sdkRequest(1, "example.echo.echo", `{}`)) // R27
		if m := r.wantError(1, wire.CodeInvalid); m.Message == "" {
			t.Fatal("refusal without a message")
		}
		r.initialize(2)
		r.send(sdkRequest(3, proto.MethodInitialize, `{"protocol":1,"configuration":{}}`)) // A7
		r.wantError(3, wire.CodeInvalid)
		// R12, A4: unknown and missing fields, a wrong v, non-object params: refused, not run.
		r.send(`{"type":"request","v":1,"id":4,"method":"example.echo.fail","params":{"code":"denied"},"extra":1}`)
		r.wantError(4, wire.CodeInvalid)
		r.send(`{"type":"request","v":1,"id":5,"method":"example.echo.echo"}`)
		r.wantError(5, wire.CodeInvalid)
		r.send(`{"type":"request","v":2,"id":6,"method":"example.echo.echo","params":{}}`)
		r.wantError(6, wire.CodeInvalid)
		r.send(`{"type":"request","v":1,"id":7,"method":"example.echo.echo","params":[1]}`)
		r.wantError(7, wire.CodeInvalid)
		r.send(sdkRequest(8, "example.echo.nope", `{}`)) // R42
		if m := r.wantError(8, wire.CodeUnavailable); m.Message != proto.MessageUnknownMethod {
			t.Fatalf("unknown method message %q", m.Message)
		}
		// R37: cancels of unknown ids and malformed cancels get no reply.
		r.send(sdkCancel(99))
		r.send(`{"type":"cancel","v":1,"id":9,"extra":true}`)
		r.send(sdkRequest(9, "example.echo.echo", `{"ok":true}`))
		if m := r.recv(); m.Type != proto.TypeResult || m.ID != 9 || string(m.Value) != `{"ok":true}` {
			t.Fatalf("echo: %+v", m)
		}

		// Cancel arrives as cancellation: the sleep answers aborted at once (R38, A19).
		r.send(sdkRequest(10, "example.echo.sleep", `{"ms":30000}`))
		r.send(sdkCancel(10))
		if m := r.wantError(10, wire.CodeAborted); m.Message != "Sleep canceled" {
			t.Fatalf("cancelled sleep message %q", m.Message)
		}

		// R40: of 33 concurrent sleeps exactly one, the 33rd, is answered busy, at once.
		const first = 100
		for i := range uint64(limits.MaxInFlight + 1) {
			r.send(sdkRequest(first+i, "example.echo.sleep", `{"ms":30000}`))
		}
		r.wantError(first+limits.MaxInFlight, wire.CodeBusy)
		for i := range uint64(limits.MaxInFlight) {
			r.send(sdkCancel(first + i))
		}
		seen := make(map[uint64]bool)
		for range limits.MaxInFlight {
			m := r.recv()
			if m.Type != proto.TypeError || m.Code != wire.CodeAborted || m.ID < first || m.ID >= first+limits.MaxInFlight || seen[m.ID] {
				t.Fatalf("reply to a cancelled sleep: %+v", m)
			}
			seen[m.ID] = true // R16: exactly one reply per request
		}

		// R49: stdin EOF cancels what runs and the process exits within 2 s, cleanly.
		r.send(sdkRequest(200, "example.echo.sleep", `{"ms":30000}`))
		r.send(sdkRequest(201, "example.echo.echo", `{}`))
		if m := r.recv(); m.ID != 201 {
			t.Fatalf("echo: %+v", m)
		}
		r.in.Close()
		if took := r.waitExit(); took > limits.ProcessCleanup {
			t.Errorf("exited %v after stdin EOF, bound %v", took, limits.ProcessCleanup)
		}
		if m, ok := <-r.frames; ok {
			if mm, err := proto.DecodeAdapterMessage(m); err != nil || mm.ID != 200 || mm.Code != wire.CodeAborted {
				t.Fatalf("after EOF: %s, want aborted for 200", m)
			}
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
	})
}

// A28, A14, R4, R5: host faults that cannot be tied to a request end the connection:
// the adapter exits with status 1 without replying.
func TestSDKHostViolations(t *testing.T) {
	forEachSDK(t, func(t *testing.T, a sdkEcho) {
		for _, tc := range []struct {
			name  string
			frame func(r *rawSDK)
		}{
			{"zero-length frame", func(r *rawSDK) { _, _ = r.in.Write([]byte{0, 0, 0, 0}) }},
			{"oversized length", func(r *rawSDK) { _, _ = r.in.Write([]byte{0, 0x40, 0, 1}) }},
			{"not JSON", func(r *rawSDK) { r.send(`{"type":`) }},
			{"a result from the host", func(r *rawSDK) { r.send(`{"type":"result","v":1,"id":2,"value":1}`) }},
			{"a request without id", func(r *rawSDK) { r.send(`{"type":"request","v":1,"method":"a.b","params":{}}`) }},
			{"id 2.0", func(r *rawSDK) { r.send(`{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}`) }},
			{"id beyond 2^53-1", func(r *rawSDK) { r.send(sdkRequest(1<<53, "example.echo.echo", `{}`)) }},
			{"id not increasing", func(r *rawSDK) { r.send(sdkRequest(1, "example.echo.echo", `{}`)) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := startRawSDK(t, a)
				r.initialize(1)
				tc.frame(r)
				r.waitExit()
				if p, ok := <-r.frames; ok {
					t.Fatalf("reply to a violation: %s", p)
				}
				if code := r.cmd.ProcessState.ExitCode(); code != 1 {
					t.Fatalf("exit code %d, want 1", code)
				}
			})
		}
	})
}
