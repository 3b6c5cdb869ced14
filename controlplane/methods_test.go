package controlplane

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/cpconst"
	"github.com/adapterkit/adapterkit/limits"
)

func TestPingVersionStatus(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0")}, Version: "9.9.9"})
	c := dial(t, sock)
	ctx := testCtx(t)

	p, err := c.Ping(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.ServerTime.IsZero() || p.RoundTrip <= 0 {
		t.Errorf("Ping = %+v: want a server time and a measured round trip", p)
	}

	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Daemon != "9.9.9" || v.Protocol != cpconst.ProtocolVersion || v.AdapterProtocol != limits.ProtocolVersion || v.Go == "" {
		t.Errorf("Version = %+v", v)
	}

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Health != healthOK || st.PID != os.Getpid() || st.Clients != 1 || len(st.Adapters) != 0 || st.Started.IsZero() {
		t.Errorf("Status before any Send = %+v", st)
	}

	// Status counts what Send opened: the adapter opened lazily, its call counted.
	if _, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st, err = c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Adapters) != 1 || st.Adapters[0].Name != "echo" || st.Adapters[0].State != "running" || st.Adapters[0].PID <= 0 {
		t.Fatalf("Status after Send: adapters %+v", st.Adapters)
	}
	if st.Calls != 1 || st.InFlight != 0 || st.UnverifiedCleanups != 0 || len(st.Reserved) != 1 {
		t.Errorf("Status after Send = %+v", st)
	}
}

func TestCapabilities(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")}})
	c := dial(t, sock)
	caps, err := c.Capabilities(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.Adapters) != 2 {
		t.Fatalf("Capabilities lists %d adapters, want 2: %+v", len(caps.Adapters), caps)
	}
	want := map[string]string{"echo": "example.echo", "thermometer": "example.device"}
	for _, a := range caps.Adapters {
		if a.Error != nil || len(a.Services) != 1 || a.Services[0].ID != want[a.Name] || a.Services[0].Version != 1 || len(a.Services[0].Methods) == 0 {
			t.Errorf("adapter %+v", a)
		}
		if !filepath.IsAbs(a.Path) || a.Size == 0 {
			t.Errorf("adapter info %+v", a.AdapterInfo)
		}
	}
	if !slices.Contains(caps.Adapters[1].Services[0].Methods, "example.device.read") {
		t.Errorf("thermometer methods %v", caps.Adapters[1].Services[0].Methods)
	}
}

func TestSend(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0", "thermometer_v1.0.0")
	sock := startServer(t, ServerConfig{Dirs: []string{dir}})
	c := dial(t, sock)
	ctx := testCtx(t)
	for _, tc := range []struct {
		adapter, method, params, want string
	}{
		{"echo", "example.echo.echo", `{"a":[1,2,{"b":"c"}]}`, `{"a":[1,2,{"b":"c"}]}`},
		{"thermometer@~> 1.0", "example.device.read", `{"probe":"inlet"}`, `{"celsius":21.5}`},
		{filepath.Join(dir, "thermometer_v1.0.0"), "example.device.read", `{"probe":"inlet"}`, `{"celsius":21.5}`},
		{"echo", "example.echo.echo", ``, `{}`},
	} {
		res, err := c.Send(ctx, SendParams{Adapter: tc.adapter, Method: tc.method, Params: json.RawMessage(tc.params), TimeoutMS: 10000})
		if err != nil {
			t.Fatalf("Send %s %s: %v", tc.adapter, tc.method, err)
		}
		if string(res.Value) != tc.want {
			t.Errorf("Send %s %s = %s, want %s", tc.adapter, tc.method, res.Value, tc.want)
		}
		if res.Adapter.Path == "" || res.Adapter.Version == "" {
			t.Errorf("Send result adapter %+v", res.Adapter)
		}
	}
}

// TestSendErrors: each failure of Send maps to its control-plane code; the adapter
// protocol's code and outcome stay in the details. Adapter-protocol rules seen
// through the daemon: R61/A31 (a relative path is refused, never resolved), R41/A22
// (a method not advertised never reaches the adapter: never started), R28/R29 (a
// code outside the eight arrives as failed), R43 (a call's deadline: uncertain).
func TestSendErrors(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0")
	other := adapterDir(t, "thermometer_v1.0.0") // not served
	sock := startServer(t, ServerConfig{Dirs: []string{dir}})
	c := dial(t, sock)
	ctx := testCtx(t)
	type check func(t *testing.T, d CallDetails)
	adapterCode := func(code string, uncertain, never bool) check {
		return func(t *testing.T, d CallDetails) {
			if d.AdapterCode != code || d.Uncertain != uncertain || d.NeverStarted != never || d.Adapter == "" {
				t.Errorf("details %+v, want adapter_code %s uncertain %v never_started %v", d, code, uncertain, never)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		params any
		code   Code
		check  check
	}{
		{"unknown adapter", map[string]any{"adapter": "nosuch", "method": "x.y"}, CodeNotFound, nil},
		{"version not found", map[string]any{"adapter": "echo@>= 2", "method": "example.echo.echo"}, CodeNotFound, nil},
		{"path outside the directories", map[string]any{"adapter": filepath.Join(other, "thermometer_v1.0.0"), "method": "example.device.read"}, CodeNotFound, nil},
		{"relative path", map[string]any{"adapter": "./echo_v1.2.0", "method": "example.echo.echo"}, CodeInvalidParams, nil},
		{"bad reference", map[string]any{"adapter": "Echo!", "method": "example.echo.echo"}, CodeInvalidParams, nil},
		{"method not advertised", map[string]any{"adapter": "echo", "method": "example.echo.nosuch"}, CodeNotImplemented, adapterCode("unavailable", false, true)},
		{"adapter says denied", map[string]any{"adapter": "echo", "method": "example.echo.fail", "params": map[string]any{"code": "denied", "message": "no"}}, CodeTransportError, adapterCode("denied", false, false)},
		{"adapter says invalid", map[string]any{"adapter": "echo", "method": "example.echo.fail", "params": map[string]any{"code": "invalid", "message": "bad"}}, CodeInvalidParams, adapterCode("invalid", false, false)},
		{"adapter code outside the eight", map[string]any{"adapter": "echo", "method": "example.echo.fail", "params": map[string]any{"code": "weird", "message": "x"}}, CodeTransportError, adapterCode("failed", false, false)},
		{"deadline", map[string]any{"adapter": "echo", "method": "example.echo.sleep", "params": map[string]any{"ms": 20000}, "timeout_ms": 200}, CodeTransportError, adapterCode("deadline", true, false)},
		{"missing adapter", map[string]any{"method": "example.echo.echo"}, CodeInvalidParams, nil},
		{"missing method", map[string]any{"adapter": "echo"}, CodeInvalidParams, nil},
		{"unknown field", map[string]any{"adapter": "echo", "method": "example.echo.echo", "extra": 1}, CodeInvalidParams, nil},
		{"mistyped field", map[string]any{"adapter": 7, "method": "example.echo.echo"}, CodeInvalidParams, nil},
		{"params not an object", map[string]any{"adapter": "echo", "method": "example.echo.echo", "params": []int{1}}, CodeInvalidParams, nil},
		{"timeout too long", map[string]any{"adapter": "echo", "method": "example.echo.echo", "timeout_ms": 30001}, CodeInvalidParams, nil},
		{"negative timeout", map[string]any{"adapter": "echo", "method": "example.echo.echo", "timeout_ms": -1}, CodeInvalidParams, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(ctx, methodSend, tc.params, nil)
			e := wantCode(t, err, tc.code)
			if e.Message == "" {
				t.Error("error without a message")
			}
			if tc.check != nil {
				d, ok := e.CallDetails()
				if !ok {
					t.Fatalf("error %v carries no call details", e)
				}
				tc.check(t, d)
			}
		})
	}
	// The adapter survived all of it.
	if _, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo"}); err != nil {
		t.Fatal(err)
	}
}

// TestSendAdapterDied (R51, R52): an adapter that exits mid-call is a transport_error whose
// details name the violation; the restart policy brings it back for the next Send.
func TestSendAdapterDied(t *testing.T) {
	dir := adapterDir(t, "echo_v1.2.0")
	sock := startServer(t, ServerConfig{Dirs: []string{dir}})
	c := dial(t, sock)
	ctx := testCtx(t)
	st0 := sendAndStatus(t, c, "echo")
	pid := st0.Adapters[0].PID
	if err := killPid(pid); err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("as root, killing the adapter %d: %v", pid, err)
		}
		t.Skipf("cannot kill the adapter here: %v", err)
	}
	// Calls fail until the supervisor restarted it; then they succeed again.
	for {
		_, err := c.Send(ctx, SendParams{Adapter: "echo", Method: "example.echo.echo", TimeoutMS: 10000})
		if err == nil {
			break
		}
		e := wantCode(t, err, CodeTransportError)
		if d, _ := e.CallDetails(); d.AdapterCode != "closed" {
			t.Fatalf("details %+v, want adapter_code closed", d)
		}
		if ctx.Err() != nil {
			t.Fatal("the adapter was not restarted")
		}
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Restarts < 1 || st.Exits < 1 || len(st.Adapters) != 1 || st.Adapters[0].PID == pid {
		t.Errorf("Status after the adapter died = restarts %d exits %d adapters %+v", st.Restarts, st.Exits, st.Adapters)
	}
}

func sendAndStatus(t *testing.T, c *Client, adapter string) *StatusResult {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Send(ctx, SendParams{Adapter: adapter, Method: "example.echo.echo"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Adapters) != 1 || st.Adapters[0].PID <= 0 {
		t.Fatalf("Status adapters %+v", st.Adapters)
	}
	return st
}

func TestUnknownMethodAndParams(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	c := dial(t, sock)
	ctx := testCtx(t)
	_, err := c.Call(ctx, "Frobnicate", nil, nil)
	wantCode(t, err, CodeUnknownMethod)
	if CodeOf(err) != CodeUnknownMethod {
		t.Error("CodeOf(err) is not unknown_method")
	}
	_, err = c.Call(ctx, "ping", nil, nil) // method names are case-sensitive
	wantCode(t, err, CodeUnknownMethod)
	for _, m := range []string{methodPing, methodVersion, methodCapabilities, methodStatus} {
		_, err := c.Call(ctx, m, map[string]any{"unexpected": true}, nil)
		wantCode(t, err, CodeInvalidParams)
		if _, err := c.Call(ctx, m, json.RawMessage(`null`), nil); err != nil {
			t.Errorf("%s with null params: %v", m, err)
		}
	}
	for _, p := range []any{nil, map[string]any{"timeout_ms": 0}, map[string]any{"timeout_ms": "1"}, map[string]any{"timeout_ms": 600001}, map[string]any{"timeout_ms": 5, "x": 1}} {
		_, err := c.Call(ctx, methodDiscover, p, func(json.RawMessage) error { return nil })
		wantCode(t, err, CodeInvalidParams)
	}
	// A client refuses, without sending, a request over the cap.
	_, err = c.Call(ctx, methodSend, map[string]any{"adapter": "echo", "method": "example.echo.echo",
		"params": map[string]string{"x": strings.Repeat("x", limits.ControlMaxFrameSize)}}, nil)
	wantCode(t, err, CodeFrameTooLarge)
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTimeoutOverflow: a timeout_ms whose nanoseconds overflow int64 is out of range
// (invalid_params), not wrapped around into a negative or a tiny timeout that passes
// the bound.
func TestTimeoutOverflow(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	c := dial(t, sock)
	ctx := testCtx(t)
	for _, ms := range []int64{
		9223372036855,  // ×1e6 wraps to a negative duration
		18446744073710, // ×1e6 wraps to +448384 ns
		math.MaxInt64,
	} {
		_, err := c.Call(ctx, methodSend, map[string]any{"adapter": "nosuch", "method": "x.y", "timeout_ms": ms}, nil)
		wantCode(t, err, CodeInvalidParams)
		_, err = c.Call(ctx, methodDiscover, map[string]any{"timeout_ms": ms}, func(json.RawMessage) error { return nil })
		wantCode(t, err, CodeInvalidParams)
	}
}

// TestParamsFieldNamesExact: params field names match exactly: encoding/json would
// take "Adapter" or "TIMEOUT_MS" for adapter and timeout_ms, but they are unknown
// fields (invalid_params), as is a field given twice.
func TestParamsFieldNamesExact(t *testing.T) {
	sock := startServer(t, ServerConfig{Dirs: []string{adapterDir(t)}})
	c := dial(t, sock)
	ctx := testCtx(t)
	for _, tc := range []struct {
		method string
		params string
	}{
		{methodSend, `{"Adapter":"nosuch","method":"x.y"}`},
		{methodSend, `{"adapter":"nosuch","METHOD":"x.y"}`},
		{methodSend, `{"adapter":"nosuch","method":"x.y","Timeout_ms":5}`},
		{methodSend, `{"adapter":"echo","adapter":"nosuch","method":"x.y"}`},
		{methodDiscover, `{"Timeout_MS":5}`},
		{methodDiscover, `{"timeout_ms":600000,"timeout_ms":5}`},
	} {
		_, err := c.Call(ctx, tc.method, json.RawMessage(tc.params), func(json.RawMessage) error { return nil })
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidParams {
			t.Errorf("%s %s: %v, want invalid_params", tc.method, tc.params, err)
		}
	}
	// The exact names still work.
	_, err := c.Call(ctx, methodSend, json.RawMessage(`{"adapter":"nosuch","method":"x.y","params":{"A":1},"timeout_ms":5}`), nil)
	wantCode(t, err, CodeNotFound)
}
