//go:build linux || darwin

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/cpconst"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
)

// shortDir returns a fresh directory with a short path (a Unix socket path is limited
// to about 100 bytes, and t.TempDir's paths can be longer).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "actl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// daemon is a serve command running in-process.
type daemon struct {
	sock   string
	ready  string // the first line printed
	cancel context.CancelFunc
	done   chan result
}

// startDaemon runs serve with args (which must include --socket) and waits for its
// ready line. The daemon is stopped at the end of the test if stop was not called.
func startDaemon(t *testing.T, sock string, args ...string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	d := &daemon{sock: sock, cancel: cancel, done: make(chan result, 1)}
	lines := make(chan string, 1)
	rest := make(chan string, 1)
	go func() {
		br := bufio.NewReader(pr)
		line, _ := br.ReadString('\n')
		lines <- line
		b, _ := io.ReadAll(br)
		rest <- string(b)
	}()
	go func() {
		code := serve(ctx, &env{stdin: strings.NewReader(""), stdout: pw, stderr: &errOut}, args)
		pw.Close()
		d.done <- result{code: code, stdout: <-rest, stderr: errOut.String()}
	}()
	d.ready = <-lines
	if d.ready == "" {
		r := d.stop(t)
		t.Fatalf("serve did not become ready: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	t.Cleanup(func() { d.stop(t) })
	return d
}

// stop cancels the daemon's context (what SIGTERM does) and returns what it printed
// after the ready line.
func (d *daemon) stop(t *testing.T) result {
	t.Helper()
	d.cancel()
	select {
	case r := <-d.done:
		d.done <- r
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s")
		return result{}
	}
}

// decodeStrict decodes exactly one JSON value of s into v, refusing unknown fields.
func decodeStrict(t *testing.T, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not the documented JSON (%T): %v\n%s", v, err, s)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value:\n%s", s)
	}
}

// TestDaemon: one daemon over goodDir and a directory holding the crashing adapter;
// every client command over its socket, text and JSON, and the exit statuses of
// control-plane errors.
func TestDaemon(t *testing.T) {
	crashDir := shortDir(t)
	src, err := os.ReadFile(bad("crash_v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	crash := writeFile(t, crashDir, "crash_v1.0.0", string(src), 0o755)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, goodDir, crashDir)
	if want := fmt.Sprintf("adapterctl serve: serving 3 adapters from %s, %s on %s (pid %d)\n", goodDir, crashDir, sock, os.Getpid()); d.ready != want {
		t.Errorf("ready line %q, want %q", d.ready, want)
	}

	t.Run("ping", func(t *testing.T) {
		runCmd(t, "", "ping", "--socket", sock).want(t, ExitOK, []string{"daemon", sock, "server time", "round trip", "clock skew"}, nil)
		r := runCmd(t, "", "ping", "--json", "--socket", sock)
		r.want(t, ExitOK, nil, nil)
		var out pingOutput
		decodeStrict(t, r.stdout, &out)
		if out.Socket != sock || out.ServerTime.IsZero() || out.RoundTripNS <= 0 {
			t.Errorf("ping --json: %+v", out)
		}
	})

	t.Run("version", func(t *testing.T) {
		runCmd(t, "", "version", "--socket", sock).want(t, ExitOK, []string{"daemon            devel", "adapter protocol  1", goruntime.Version()}, nil)
		r := runCmd(t, "", "version", "--socket", sock, "--json")
		r.want(t, ExitOK, nil, nil)
		var out controlplane.VersionResult
		decodeStrict(t, r.stdout, &out)
		if out != (controlplane.VersionResult{Daemon: "devel", Protocol: cpconst.ProtocolVersion,
			AdapterProtocol: limits.ProtocolVersion, Go: goruntime.Version()}) {
			t.Errorf("version --json: %+v", out)
		}
	})

	t.Run("capabilities", func(t *testing.T) {
		r := runCmd(t, "", "capabilities", "--socket", sock)
		r.want(t, ExitOK, []string{"NAME", good("echo_v1.2.0"), "  example.echo v1 (7 methods)\n    example.echo.echo\n",
			"  example.device v1 (1 method)\n    example.device.read\n", "  bad.adapter v1 (1 method)"}, nil)
		r = runCmd(t, "", "capabilities", "--socket", sock, "--json")
		r.want(t, ExitOK, nil, nil)
		var out controlplane.CapabilitiesResult
		decodeStrict(t, r.stdout, &out)
		got := map[string]string{}
		for _, a := range out.Adapters {
			if a.Error != nil || len(a.Services) != 1 {
				t.Errorf("adapter %+v", a)
				continue
			}
			got[a.Name+" "+a.Version+" "+a.Path] = a.Services[0].ID
		}
		want := map[string]string{"echo 1.2.0 " + good("echo_v1.2.0"): "example.echo",
			"thermometer 1.0.0 " + good("thermometer_v1.0.0"): "example.device", "crash 1.0.0 " + crash: "bad.adapter"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("capabilities %v, want %v", got, want)
		}
	})

	t.Run("call", func(t *testing.T) {
		tests := []struct {
			name   string
			stdin  string
			args   []string
			code   int
			stdout string
			stderr []string
		}{
			{"echo", "", []string{"echo", "example.echo.echo", `{"a":[1,2],"b":"x"}`}, ExitOK, `{"a":[1,2],"b":"x"}` + "\n", nil},
			{"params default to {}", "", []string{"echo", "example.echo.echo"}, ExitOK, "{}\n", nil},
			{"params from stdin, by constraint", `{"probe":"inlet"}`, []string{"thermometer@~> 1.0", "example.device.read", "-"}, ExitOK, `{"celsius":21.5}` + "\n", nil},
			{"by absolute path", "", []string{good("echo_v1.2.0"), "example.echo.echo", `{"p":1}`}, ExitOK, `{"p":1}` + "\n", nil},
			{"adapter error", "", []string{"echo", "example.echo.fail", `{"code":"denied","message":"not you"}`}, ExitFailed, "",
				[]string{"error denied: not you", "the adapter answered", "daemon: transport_error"}},
			{"adapter invalid", "", []string{"thermometer", "example.device.read", `{"probe":"x"}`}, ExitFailed, "",
				[]string{"error invalid", "unknown probe", "daemon: invalid_params"}},
			// R41, A22: refused by the daemon's host side, never sent.
			{"method not advertised", "", []string{"echo", "example.echo.nope"}, ExitFailed, "", []string{"error unavailable", "never started", "not_implemented"}},
			// R43: the deadline passes after the request was sent: uncertain.
			{"deadline", "", []string{"--timeout", "100ms", "thermometer", "example.device.read", `{"probe":"slow"}`}, ExitFailed, "",
				[]string{"error deadline", "uncertain"}},
			{"not found", "", []string{"nope", "a.b"}, ExitNotFound, "", []string{"not_found", "no adapter with that name"}},
			{"no matching version", "", []string{"echo@>= 2", "a.b"}, ExitNotFound, "", []string{"not_found"}},
			{"bad reference", "", []string{"Echo@", "a.b"}, ExitUsage, "", []string{"invalid_params", "invalid adapter name"}},
			// R61: never resolved.
			{"relative path", "", []string{"./echo_v1.2.0", "a.b"}, ExitUsage, "", []string{"invalid_params", "not absolute"}},
			{"path outside the directories", "", []string{bad("garbage_v1.0.0"), "a.b"}, ExitNotFound, "", []string{"not_found"}},
			// R52: the process exits instead of answering; the daemon says so.
			{"process exited", "", []string{"crash", "bad.adapter.echo"}, ExitBroken, "",
				[]string{"error closed", "uncertain", "connection broken: The adapter process exited"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := runCmd(t, tt.stdin, append([]string{"call", "--socket", sock}, tt.args...)...)
				r.want(t, tt.code, nil, tt.stderr)
				if r.stdout != tt.stdout {
					t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
				}
			})
		}
	})

	t.Run("call --json errors", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			want errorReport
		}{
			{"adapter error", []string{"echo", "example.echo.fail", `{"code":"busy","message":"later"}`}, errorReport{
				Command: "call", Error: "controlplane: transport_error: later", Exit: ExitFailed,
				Call:    &callReport{Method: "example.echo.fail", Code: "busy", Message: "later"},
				Control: &controlReport{Code: "transport_error", Message: "later", Adapter: good("echo_v1.2.0")}}},
			{"never started", []string{"echo", "example.echo.nope"}, errorReport{
				Command: "call", Error: `controlplane: not_implemented: adapter does not advertise method "example.echo.nope"`, Exit: ExitFailed,
				Call: &callReport{Method: "example.echo.nope", Code: "unavailable", NeverStarted: true,
					Message: `adapter does not advertise method "example.echo.nope"`},
				Control: &controlReport{Code: "not_implemented", Message: `adapter does not advertise method "example.echo.nope"`, Adapter: good("echo_v1.2.0")}}},
			{"process exited", []string{"crash", "bad.adapter.echo"}, errorReport{
				// The daemon passes on the violation's detail (ViolationDetail).
				Command: "call", Exit: ExitBroken, Violation: "The adapter process exited", Detail: "adapter process exit status 3",
				Call:    &callReport{Method: "bad.adapter.echo", Code: "closed", Uncertain: true},
				Control: &controlReport{Code: "transport_error", Adapter: crash}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := runCmd(t, "", append([]string{"call", "--json", "--socket", sock}, tt.args...)...)
				if r.code != tt.want.Exit || r.stdout != "" {
					t.Fatalf("exit %d, stdout %q; want %d and nothing\nstderr:\n%s", r.code, r.stdout, tt.want.Exit, r.stderr)
				}
				var got errorReport
				decodeStrict(t, r.stderr, &got)
				if got.Call == nil || got.Control == nil {
					t.Fatalf("report without call or control: %s", r.stderr)
				}
				if tt.want.Error == "" { // the message of a broken connection is the runtime's
					got.Error, got.Call.Message, got.Control.Message = "", "", ""
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("report\n%+v %+v %+v\nwant\n%+v %+v %+v", got, *got.Call, *got.Control, tt.want, *tt.want.Call, *tt.want.Control)
				}
			})
		}
	})

	t.Run("status", func(t *testing.T) {
		runCmd(t, "", "status", "--socket", sock).want(t, ExitOK, []string{"health      ok", "dirs        " + goodDir + ", " + crashDir,
			"  NAME", "running", good("echo_v1.2.0")}, nil)
		r := runCmd(t, "", "status", "--socket", sock, "--json")
		r.want(t, ExitOK, nil, nil)
		var out controlplane.StatusResult
		decodeStrict(t, r.stdout, &out)
		if out.Health != "ok" || out.PID != os.Getpid() || out.Clients < 1 || // earlier clients may still be leaving
			out.Calls == 0 ||
			strings.Join(out.Dirs, ",") != goodDir+","+crashDir {
			t.Errorf("status --json: %+v", out)
		}
		running := false
		for _, a := range out.Adapters {
			running = running || (a.Path == good("echo_v1.2.0") && a.State == "running" && a.PID > 0)
		}
		if !running {
			t.Errorf("echo not running in %+v", out.Adapters)
		}
	})

	t.Run("discover", func(t *testing.T) {
		r := runCmd(t, "", "discover", "--socket", sock, "--timeout", "300ms")
		r.want(t, ExitOK, []string{"found    echo  1.2.0  " + good("echo_v1.2.0") + "\n", "found    crash  1.0.0  " + crash + "\n"}, nil)
		if n := strings.Count(r.stdout, "\n"); n != 3 {
			t.Errorf("%d lines, want 3 (one per adapter):\n%s", n, r.stdout)
		}
		r = runCmd(t, "", "discover", "--socket", sock, "--timeout", "300ms", "--json")
		r.want(t, ExitOK, nil, nil)
		got := map[string]bool{}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			var ev controlplane.DiscoverEvent
			decodeStrict(t, line, &ev)
			if ev.Change != "found" || ev.Adapter.Size == 0 || ev.Adapter.Dir == "" {
				t.Errorf("event %+v", ev)
			}
			got[ev.Adapter.Path] = true
		}
		if len(got) != 3 || !got[crash] || !got[good("echo_v1.2.0")] || !got[good("thermometer_v1.0.0")] {
			t.Errorf("found %v", got)
		}
	})

	t.Run("socket in use", func(t *testing.T) {
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code := serve(ctx, &env{stdout: &out, stderr: &errOut}, []string{"--socket", sock, goodDir})
		if code != ExitBroken || out.Len() != 0 || !strings.Contains(errOut.String(), "socket in use") {
			t.Errorf("second serve: exit %d, stdout %q, stderr %q; want %d", code, out.String(), errOut.String(), ExitBroken)
		}
	})

	// R63: the daemon's shutdown closes every adapter verified, and says so.
	r := d.stop(t)
	r.want(t, ExitOK, []string{"adapterctl serve: stopped; every adapter closed, process trees verified gone\n"}, nil)
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after shutdown: %v", err)
	}
	runCmd(t, "", "ping", "--socket", sock).want(t, ExitBroken, nil, []string{"cannot connect"})
}

// TestServeJSON: with --json, serve prints the ready and stopped lines as JSON objects.
func TestServeJSON(t *testing.T) {
	sock := filepath.Join(shortDir(t), "ctl.sock")
	t.Setenv(pathEnv, goodDir) // no DIR: the directories of $ADAPTERKIT_PATH
	d := startDaemon(t, sock, "--json", "--socket", sock)
	var ready serveEvent
	decodeStrict(t, d.ready, &ready)
	if ready.Event != "ready" || ready.Socket != sock || strings.Join(ready.Dirs, ",") != goodDir ||
		ready.Adapters == nil || *ready.Adapters != 2 || ready.PID != os.Getpid() || ready.Verified != nil {
		t.Errorf("ready line %+v", ready)
	}
	r := d.stop(t)
	r.want(t, ExitOK, nil, nil)
	var stopped serveEvent
	decodeStrict(t, r.stdout, &stopped)
	if stopped.Event != "stopped" || stopped.Verified == nil || !*stopped.Verified {
		t.Errorf("stopped line %q", r.stdout)
	}
}

// TestDaemonUsage: the usage errors of the daemon commands exit 2, an unusable
// directory 5, and a daemon that is not there 3; nothing is started.
func TestDaemonUsage(t *testing.T) {
	dir := shortDir(t)
	nosock := filepath.Join(dir, "none.sock")
	file := writeFile(t, dir, "file", "x", 0o644)
	echo := good("echo_v1.2.0")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"status with an argument", []string{"status", "--socket", nosock, "extra"}, ExitUsage, []string{"no arguments expected"}},
		{"discover timeout zero", []string{"discover", "--socket", nosock, "--timeout", "0s"}, ExitUsage, []string{"positive"}},
		{"discover timeout too long", []string{"discover", "--socket", nosock, "--timeout", "11m"}, ExitUsage, []string{"at most"}},
		{"call --dir with --socket", []string{"call", "--socket", nosock, "--dir", goodDir, "echo", "a.b"}, ExitUsage, []string{"--dir cannot be used with --socket"}},
		{"call --config and --env with --socket", []string{"call", "--config", "{}", "--env", "A=B", "--socket", nosock, "echo", "a.b"}, ExitUsage,
			[]string{"--config, --env cannot be used with --socket"}},
		{"call empty --socket", []string{"call", "--socket", "", echo, "a.b"}, ExitUsage, []string{"--socket is empty"}},
		{"call bad params with --socket", []string{"call", "--socket", nosock, "echo", "a.b", "[1]"}, ExitUsage, []string{"PARAMS_JSON"}},
		{"serve bad --log", []string{"serve", "--socket", nosock, "--log", "loud", goodDir}, ExitUsage, []string{"--log"}},
		{"serve bad --env", []string{"serve", "--socket", nosock, "--env", "X", goodDir}, ExitUsage, []string{"KEY=VALUE"}},
		{"serve without dirs", []string{"serve", "--socket", nosock}, ExitUsage, []string{"ADAPTERKIT_PATH"}},
		{"serve relative dir", []string{"serve", "--socket", nosock, "rel/dir"}, ExitNotFound, []string{"rel/dir", "does not exist"}},
		{"serve missing dir", []string{"serve", "--socket", nosock, filepath.Join(dir, "missing")}, ExitNotFound, []string{"does not exist"}},
		{"serve on a file", []string{"serve", "--socket", file, goodDir}, ExitUsage, []string{"not a socket"}},
		{"serve idle timeout zero", []string{"serve", "--socket", nosock, "--socket-idle-timeout", "0s", goodDir}, ExitUsage, []string{"--socket-idle-timeout", "positive"}},
		{"no daemon: ping", []string{"ping", "--socket", nosock}, ExitBroken, []string{"cannot connect"}},
		{"no daemon: version", []string{"version", "--socket", nosock}, ExitBroken, []string{"cannot connect"}},
		{"no daemon: capabilities", []string{"capabilities", "--socket", nosock}, ExitBroken, []string{"cannot connect"}},
		{"no daemon: status", []string{"status", "--socket", nosock}, ExitBroken, []string{"cannot connect"}},
		{"no daemon: discover", []string{"discover", "--socket", nosock}, ExitBroken, []string{"cannot connect"}},
		{"no daemon: call", []string{"call", "--socket", nosock, "echo", "a.b"}, ExitBroken, []string{"cannot connect"}},
		{"not a socket: call", []string{"call", "--socket", file, "echo", "a.b"}, ExitBroken, []string{"cannot connect"}},
	}
	t.Setenv("XDG_RUNTIME_DIR", dir) // no daemon at the default socket either
	tests = append(tests, struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{"no daemon: ping at the default socket", []string{"ping"}, ExitBroken, []string{filepath.Join(dir, "adapterkit.sock"), "cannot connect"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			r.want(t, tt.code, nil, tt.stderr)
			if r.stdout != "" {
				t.Errorf("stdout not empty:\n%s", r.stdout)
			}
		})
	}
	r := runCmd(t, "", "call", "--json", "--socket", nosock, "echo", "a.b")
	var rep errorReport
	decodeStrict(t, r.stderr, &rep)
	if rep.Exit != ExitBroken || rep.Command != "call" || !strings.Contains(rep.Error, "cannot connect") || rep.Control != nil {
		t.Errorf("report %+v", rep)
	}
	for _, cmd := range []string{"serve", "ping", "version", "capabilities", "discover", "status"} {
		runCmd(t, "", "help", cmd).want(t, ExitOK, []string{"Usage: adapterctl " + cmd, "--socket", "Exit status:"}, nil)
	}
	runCmd(t, "", "help", "serve").want(t, ExitOK, []string{"SIGTERM", "-adapter-stderr", "-inherit-env", "-log LEVEL"}, nil)
	runCmd(t, "", "help", "ping").want(t, ExitOK, []string{"not_found 5", "transport_error"}, nil)
	runCmd(t, "", "help", "call").want(t, ExitOK, []string{"--socket", "NAME@CONSTRAINT"}, nil)
	runCmd(t, "", "help").want(t, ExitOK, []string{"serve", "capabilities", "discover", "daemon could not be reached or started"}, nil)
}

// TestControlStatus: every control-plane error maps to its documented exit status,
// including those the daemon tests cannot provoke (R63: an unverified cleanup).
func TestControlStatus(t *testing.T) {
	cpErr := func(code controlplane.Code, d *controlplane.CallDetails) *controlplane.Error {
		e := &controlplane.Error{Code: code, Message: "m"}
		if d != nil {
			e.Details, _ = json.Marshal(d)
		}
		return e
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"not found", cpErr(controlplane.CodeNotFound, nil), ExitNotFound},
		{"invalid params of the request", cpErr(controlplane.CodeInvalidParams, nil), ExitUsage},
		{"adapter answered invalid", cpErr(controlplane.CodeInvalidParams, &controlplane.CallDetails{AdapterCode: "invalid"}), ExitFailed},
		{"frame too large", cpErr(controlplane.CodeFrameTooLarge, nil), ExitUsage},
		{"not advertised", cpErr(controlplane.CodeNotImplemented, &controlplane.CallDetails{AdapterCode: "unavailable", NeverStarted: true}), ExitFailed},
		{"not implemented by the daemon", cpErr(controlplane.CodeNotImplemented, nil), ExitBroken},
		{"adapter error", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{AdapterCode: "denied"}), ExitFailed},
		{"adapter answered closed", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{AdapterCode: "closed"}), ExitFailed},
		{"deadline", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{AdapterCode: "deadline", Uncertain: true}), ExitFailed},
		// R52
		{"violation", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{AdapterCode: "closed", Uncertain: true, Violation: "The adapter process exited"}), ExitBroken},
		{"closed by the daemon's host", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{AdapterCode: "closed", NeverStarted: true}), ExitBroken},
		{"start failed", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{Stage: "handshake"}), ExitBroken},
		{"transport error without details", cpErr(controlplane.CodeTransportError, nil), ExitBroken},
		// R63
		{"cleanup unverified", cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{Stage: "handshake", Cleanup: "no proof"}), ExitUnverified},
		{"internal", cpErr(controlplane.CodeInternal, nil), ExitBroken},
		{"unknown method", cpErr(controlplane.CodeUnknownMethod, nil), ExitBroken},
		{"a code added later", cpErr("overloaded", nil), ExitBroken},
		{"daemon unreachable", &daemonError{socket: "/s", what: "cannot connect", err: syscall.ECONNREFUSED}, ExitBroken},
		{"socket in use", fmt.Errorf("%w: /s", controlplane.ErrSocketInUse), ExitBroken},
		{"unsupported", errors.ErrUnsupported, ExitBroken},
		{"bad socket path", fmt.Errorf("%w: /s exists and is not a socket", controlplane.ErrConfig), ExitUsage},
		{"bad directory", fmt.Errorf("%w: %w", controlplane.ErrConfig, &discovery.DirError{Dir: "x", Reason: discovery.ErrNotAbsolute}), ExitNotFound},
		// R63
		{"shutdown unverified", &controlplane.ShutdownError{Err: &platform.UnverifiedError{Mechanism: platform.MechProcessGroup, Reason: "no proof"}}, ExitUnverified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitStatus(tt.err); got != tt.want {
				t.Errorf("exitStatus(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
	// The cleanup in the details is said, as text and as JSON.
	err := cpErr(controlplane.CodeTransportError, &controlplane.CallDetails{Stage: "handshake", Cleanup: "no proof [42]"})
	for _, asJSON := range []bool{false, true} {
		var stderr bytes.Buffer
		if got := fail(&env{stdout: io.Discard, stderr: &stderr}, "call", asJSON, err, nil); got != ExitUnverified {
			t.Errorf("json %v: exit %d", asJSON, got)
		}
		for _, s := range []string{"transport_error", "handshake", "no proof [42]"} {
			if !strings.Contains(stderr.String(), s) {
				t.Errorf("json %v: stderr lacks %q:\n%s", asJSON, s, stderr.String())
			}
		}
	}
}

// TestServeSignal: the real program stops on SIGTERM, closing its adapters verified
// and removing its socket (the library never handles signals; the command does).
func TestServeSignal(t *testing.T) {
	bin := filepath.Join(shortDir(t), "adapterctl")
	//lint:ignore SA1019 this test binary runs on the machine that built it
	goTool := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(shortDir(t), "ctl.sock")
	cmd := exec.Command(bin, "serve", "--socket", sock, goodDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	br := bufio.NewReader(stdout)
	ready, _ := br.ReadString('\n')
	var rest string
	var waitErr error
	go func() {
		b, _ := io.ReadAll(br)
		rest = string(b)
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	if !strings.HasPrefix(ready, "adapterctl serve: serving 2 adapters from "+goodDir+" on "+sock) {
		t.Fatalf("ready line %q\nstderr:\n%s", ready, stderr.String())
	}
	// An adapter is opened, so the shutdown has a process tree to verify gone.
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo").want(t, ExitOK, []string{"{}"}, nil)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("adapterctl serve after SIGTERM: %v\nstderr:\n%s", waitErr, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("adapterctl serve did not stop within 30 s of SIGTERM")
	}
	if rest != "adapterctl serve: stopped; every adapter closed, process trees verified gone\n" {
		t.Errorf("after SIGTERM stdout %q", rest)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after SIGTERM: %v", err)
	}
}

// TestServeSocketCannotBeCreated: a socket that cannot be created (its directory is
// missing, or the path is longer than sun_path) means the daemon could not start:
// exit 3 as documented, with or without --json, and nothing on stdout.
func TestServeSocketCannotBeCreated(t *testing.T) {
	d := shortDir(t)
	for _, sock := range []string{
		filepath.Join(d, "missing", "ctl.sock"),
		filepath.Join(d, strings.Repeat("x", 200)),
	} {
		for _, asJSON := range []bool{false, true} {
			args := []string{"--socket", sock, goodDir}
			if asJSON {
				args = append([]string{"--json"}, args...)
			}
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			code := serve(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, args)
			cancel()
			if code != ExitBroken || out.Len() != 0 {
				t.Errorf("serve %q: exit %d, stdout %q, stderr %q; want %d and no output", args, code, out.String(), errOut.String(), ExitBroken)
			}
			if asJSON {
				var rep errorReport
				decodeStrict(t, errOut.String(), &rep)
				if rep.Exit != ExitBroken || rep.Command != "serve" {
					t.Errorf("report %+v", rep)
				}
			}
		}
	}
}
