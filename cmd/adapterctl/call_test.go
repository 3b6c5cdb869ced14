package main

import (
	"encoding/json"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestCall: one call per run; the result on stdout, the typed error on stderr, and the
// exit status saying who failed.
func TestCall(t *testing.T) {
	echo, thermo := good("echo_v1.2.0"), good("thermometer_v1.0.0")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // exact stdout
		stderr []string
	}{
		{"echo", "", []string{"call", echo, "example.echo.echo", `{"a":[1,2],"b":"x"}`}, ExitOK, `{"a":[1,2],"b":"x"}` + "\n", nil},
		{"params default to {}", "", []string{"call", echo, "example.echo.echo"}, ExitOK, "{}\n", nil},
		{"params from stdin", `{"probe":"inlet"}`, []string{"call", thermo, "example.device.read", "-"}, ExitOK, `{"celsius":21.5}` + "\n", nil},
		{"flags after arguments", "", []string{"call", "--dir", goodDir, "thermometer", "example.device.read", `{"probe":"inlet"}`, "--json"}, ExitOK, `{"celsius":21.5}` + "\n", nil},
		{"adapter error", "", []string{"call", echo, "example.echo.fail", `{"code":"denied","message":"not you"}`}, ExitFailed, "",
			[]string{"error denied: not you", "the adapter answered"}},
		// R29: a code that is not one of the eight arrives as failed (the SDK sends it so, R28).
		{"unknown code", "", []string{"call", echo, "example.echo.fail", `{"code":"Busy","message":"m"}`}, ExitFailed, "", []string{"error failed"}},
		{"adapter invalid", "", []string{"call", thermo, "example.device.read", `{"probe":"x"}`}, ExitFailed, "", []string{"error invalid: unknown probe"}},
		// R41, A22: refused by the host, never sent.
		{"method not advertised", "", []string{"call", echo, "example.echo.nope"}, ExitFailed, "", []string{"error unavailable", "never started"}},
		// R43, A17: the deadline passes after the request was sent: uncertain.
		{"deadline", "", []string{"call", "--timeout", "100ms", thermo, "example.device.read", `{"probe":"slow"}`}, ExitFailed, "",
			[]string{"error deadline", "uncertain"}},
		// R52: the process exits instead of answering.
		{"process exited", "", []string{"call", bad("crash_v1.0.0"), "bad.adapter.echo"}, ExitBroken, "",
			[]string{"connection broken: The adapter process exited"}},
		// R6, R53: text on stdout breaks the connection, during the handshake or the call.
		{"garbage on stdout", "", []string{"call", bad("garbage_v1.0.0"), "bad.adapter.echo"}, ExitBroken, "",
			[]string{"The adapter output ended or violated the protocol", `reads as text "hell": something printed to stdout?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, tt.stdin, tt.args...)
			r.want(t, tt.code, nil, tt.stderr)
			if r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
		})
	}
}

// TestCallJSONError: with --json the error is one JSON object on stderr with the code,
// the message and the outcome; stdout stays empty.
func TestCallJSONError(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		call      callReport
		violation string
	}{
		{"adapter error", []string{"call", "--json", good("echo_v1.2.0"), "example.echo.fail", `{"code":"busy","message":"later"}`}, ExitFailed,
			callReport{Method: "example.echo.fail", ID: 2, Code: "busy", Message: "later"}, ""},
		{"never started", []string{"call", "--json", good("echo_v1.2.0"), "example.echo.nope"}, ExitFailed,
			callReport{Method: "example.echo.nope", Code: "unavailable", Message: "Unknown method", NeverStarted: true}, ""},
		{"uncertain", []string{"call", "--json", bad("crash_v1.0.0"), "bad.adapter.echo"}, ExitBroken,
			callReport{Method: "bad.adapter.echo", ID: 2, Code: "closed", Uncertain: true}, "The adapter process exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			if r.code != tt.code || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q; want %d and nothing", r.code, r.stdout, tt.code)
			}
			var rep errorReport
			dec := json.NewDecoder(strings.NewReader(r.stderr))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("stderr is not the documented JSON object: %v\n%s", err, r.stderr)
			}
			if rep.Call == nil {
				t.Fatalf("no call in %+v", rep)
			}
			got := *rep.Call
			got.Cause = ""
			if tt.call.Message == "" {
				got.Message = ""
			}
			if got != tt.call || rep.Exit != tt.code || rep.Violation != tt.violation || rep.Command != "call" {
				t.Errorf("report %+v call %+v, want call %+v violation %q", rep, got, tt.call, tt.violation)
			}
		})
	}
}

// TestCallStartFailure: an adapter that exits before it answers initialize was never
// called: the outcome says never started, not the uncertain outcome of the initialize
// request itself, and --json names the stage.
func TestCallStartFailure(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("a script adapter")
	}
	dies := writeFile(t, t.TempDir(), "dies_v1.0.0", "#!/bin/sh\necho 'no configuration file' >&2\nexit 1\n", 0o755)
	r := runCmd(t, "", "call", dies, "example.echo.echo")
	r.want(t, ExitBroken, nil, []string{"outcome: never started (the adapter did not start, stage handshake", `"no configuration file"`})
	if strings.Contains(r.stderr, "uncertain") {
		t.Errorf("a call never sent is reported uncertain:\n%s", r.stderr)
	}
	r = runCmd(t, "", "call", "--json", dies, "example.echo.echo")
	var rep errorReport
	if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil || rep.Stage != "handshake" || rep.Exit != ExitBroken {
		t.Errorf("--json: %v, stage %q, exit %d:\n%s", err, rep.Stage, rep.Exit, r.stderr)
	}
}
