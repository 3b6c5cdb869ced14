package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestUsage: bad command lines exit 2 with a message on stderr; asked-for help exits 0
// on stdout and documents the exit statuses. Nothing is started.
func TestUsage(t *testing.T) {
	echo := good("echo_v1.2.0")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		stdoutIs string // when set, stdout must be empty ("-") or contain nothing else
	}{
		{"no arguments", nil, ExitUsage, nil, []string{"Usage:", "Commands:"}, ""},
		{"unknown command", []string{"frobnicate"}, ExitUsage, nil, []string{`unknown command "frobnicate"`}, ""},
		{"help", []string{"help"}, ExitOK, []string{"Commands:", "list", "inspect", "call", "check", "Exit status:", "4  the adapter's process tree"}, nil, ""},
		{"--help", []string{"--help"}, ExitOK, []string{"Commands:"}, nil, ""},
		{"help call", []string{"help", "call"}, ExitOK, []string{"Usage: adapterctl call", "--timeout", "Exit status:"}, nil, ""},
		{"help unknown", []string{"help", "nope"}, ExitUsage, nil, []string{`unknown command "nope"`}, ""},
		{"help two", []string{"help", "a", "b"}, ExitUsage, nil, []string{"at most one"}, ""},
		{"list --help", []string{"list", "--help"}, ExitOK, []string{"Usage: adapterctl list", "Exit status:"}, nil, ""},
		{"inspect -h", []string{"inspect", "-h"}, ExitOK, []string{"Usage: adapterctl inspect", "--config", "ADAPTERKIT_PATH"}, nil, ""},
		{"call --help after args", []string{"call", echo, "x.y", "--help"}, ExitOK, []string{"Usage: adapterctl call"}, nil, ""},
		{"check --help", []string{"check", "--help"}, ExitOK, []string{"Usage: adapterctl check", "R49", "R64", ".sleep", `{"ms": 1000}`}, nil, ""},
		{"bad flag", []string{"inspect", "--bogus", echo}, ExitUsage, nil, []string{"bogus"}, "-"},
		{"inspect no adapter", []string{"inspect"}, ExitUsage, nil, []string{"exactly one ADAPTER"}, "-"},
		{"inspect two adapters", []string{"inspect", echo, echo}, ExitUsage, nil, []string{"exactly one ADAPTER"}, "-"},
		{"call without method", []string{"call", echo}, ExitUsage, nil, []string{"ADAPTER METHOD"}, "-"},
		{"call too many", []string{"call", echo, "a.b", "{}", "{}"}, ExitUsage, nil, []string{"ADAPTER METHOD"}, "-"},
		{"params not an object", []string{"call", echo, "example.echo.echo", "[1]"}, ExitUsage, nil, []string{"PARAMS_JSON"}, "-"},
		{"params malformed", []string{"call", echo, "example.echo.echo", `{"a":`}, ExitUsage, nil, []string{"PARAMS_JSON"}, "-"},
		{"params empty", []string{"call", echo, "example.echo.echo", ""}, ExitUsage, nil, []string{"PARAMS_JSON"}, "-"},
		{"config not an object", []string{"inspect", "--config", "[]", echo}, ExitUsage, nil, []string{"--config"}, "-"}, // A33
		{"env not KEY=VALUE", []string{"inspect", "--env", "NOVALUE", echo}, ExitUsage, nil, []string{"KEY=VALUE"}, "-"},
		{"timeout zero", []string{"call", "--timeout", "0s", echo, "example.echo.echo"}, ExitUsage, nil, []string{"positive"}, "-"},
		{"timeout above deadline", []string{"check", "--timeout", "31s", echo}, ExitUsage, nil, []string{"at most"}, "-"}, // R43
		{"name without dirs", []string{"inspect", "echo"}, ExitUsage, nil, []string{"--dir", "ADAPTERKIT_PATH"}, "-"},
		{"bad reference", []string{"inspect", "--dir", goodDir, "Echo@"}, ExitUsage, nil, []string{"invalid adapter name"}, "-"},
		{"bad constraint", []string{"inspect", "--dir", goodDir, "echo@>>1"}, ExitUsage, nil, []string{"invalid version constraint"}, "-"},
		{"list without dirs", []string{"list"}, ExitUsage, nil, []string{"ADAPTERKIT_PATH"}, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", tt.args...)
			r.want(t, tt.code, tt.stdout, tt.stderr)
			if tt.stdoutIs == "-" && r.stdout != "" {
				t.Errorf("stdout not empty:\n%s", r.stdout)
			}
		})
	}
}

// TestNotFound: an adapter or directory that is not there exits 5; nothing is started.
func TestNotFound(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name   string
		env    string
		args   []string
		stderr []string
	}{
		{"no such name", "", []string{"inspect", "--dir", goodDir, "nope"}, []string{"no adapter with that name", "echo, thermometer"}},
		{"no matching version", "", []string{"call", "--dir", goodDir, "echo@>= 2", "example.echo.echo"}, []string{"no version of the adapter matches", "1.2.0"}},
		{"name via ADAPTERKIT_PATH", badDir, []string{"check", "thermometer"}, []string{"no adapter with that name"}},
		{"missing path", "", []string{"call", filepath.Join(missing, exe("echo_v1.0.0")), "a.b"}, []string{"not found"}},
		{"check missing path", "", []string{"check", filepath.Join(missing, exe("echo_v1.0.0"))}, []string{"not found"}},
		{"missing dir", "", []string{"list", missing}, []string{"does not exist"}},
		{"missing dir for a name", "", []string{"inspect", "--dir", missing, "echo"}, []string{"does not exist"}},
		{"relative dir", "", []string{"list", "relative/dir"}, []string{"relative/dir is /", "does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(pathEnv, tt.env)
			runCmd(t, "", tt.args...).want(t, ExitNotFound, nil, tt.stderr)
		})
	}
}

// TestStartFailure: a file that cannot be started exits 3 (the connection never came up).
func TestStartFailure(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("permission bits do not decide execution on Windows")
	}
	dir := t.TempDir()
	notExec := writeFile(t, dir, "plain_v1.0.0", "data", 0o644)
	for _, cmd := range []string{"inspect", "check"} {
		runCmd(t, "", cmd, notExec).want(t, ExitBroken, nil, []string{"not executable"})
	}
	r := runCmd(t, "", "call", notExec, "a.b")
	r.want(t, ExitBroken, nil, []string{"not executable"})
	r = runCmd(t, "", "inspect", "--json", notExec)
	var rep errorReport
	if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil {
		t.Fatalf("stderr is not one JSON object: %v\n%s", err, r.stderr)
	}
	if rep.Exit != ExitBroken || rep.Command != "inspect" || rep.Error == "" {
		t.Errorf("error report %+v", rep)
	}
}

// TestList: found adapters with their versions and paths, and every file not taken
// with its reason; --json has the documented shape.
func TestList(t *testing.T) {
	extra := t.TempDir()
	writeFile(t, extra, "notes.txt", "x", 0o644)
	writeFile(t, extra, "echo_v2.0.0-rc.1", "#!/bin/sh\n", 0o755)
	if goruntime.GOOS != "windows" {
		writeFile(t, extra, "lazy_v1.0.0", "x", 0o644)
	}
	r := runCmd(t, "", "list", goodDir, extra)
	r.want(t, ExitOK, []string{"echo", "1.2.0", good("echo_v1.2.0"), "thermometer", "2.0.0-rc.1",
		"Not taken", filepath.Join(extra, "notes.txt"), "bad name"}, nil)
	if goruntime.GOOS != "windows" && !strings.Contains(r.stdout, "not executable") {
		t.Errorf("lazy_v1.0.0 not reported as not executable:\n%s", r.stdout)
	}

	t.Setenv(pathEnv, goodDir+string(os.PathListSeparator)+extra)
	r = runCmd(t, "", "list", "--json")
	r.want(t, ExitOK, nil, nil)
	var out listOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	found := map[string]string{}
	for _, a := range out.Adapters {
		found[a.Name+" "+a.Version] = a.Path
		if a.Dir == "" {
			t.Errorf("adapter %+v without dir", a)
		}
	}
	if found["echo 1.2.0"] != good("echo_v1.2.0") || found["thermometer 1.0.0"] != good("thermometer_v1.0.0") || found["echo 2.0.0-rc.1"] == "" {
		t.Errorf("adapters %v", found)
	}
	var notes *listedRejection
	for i, rj := range out.Rejected {
		if filepath.Base(rj.Path) == "notes.txt" {
			notes = &out.Rejected[i]
		}
	}
	if notes == nil || notes.Reason != "bad name" || notes.Detail == "" {
		t.Errorf("notes.txt rejection %+v in %+v", notes, out.Rejected)
	}
}

// TestInspect: the catalog, the pid and the supervision are printed and the adapter is
// closed verified, by path, by name and by constraint.
func TestInspect(t *testing.T) {
	r := runCmd(t, "", "inspect", good("echo_v1.2.0"))
	r.want(t, ExitOK, []string{"example.echo v1 (4 methods)", "example.echo.sleep", "example.echo.big",
		"pid", "supervision", "verified gone"}, nil)

	r = runCmd(t, "", "inspect", "--json", "--dir", goodDir, "thermometer@~> 1.0")
	r.want(t, ExitOK, nil, nil)
	var out inspectOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	if out.Name != "thermometer" || out.Path != good("thermometer_v1.0.0") || out.Pid <= 0 || out.Supervision == "" ||
		out.Protocol != 1 || !out.CleanupVerified || len(out.Services) != 1 ||
		out.Services[0].ID != "example.device" || out.Services[0].Version != 1 ||
		strings.Join(out.Services[0].Methods, ",") != "example.device.read" {
		t.Errorf("inspect --json: %+v", out)
	}

	t.Setenv(pathEnv, goodDir)
	runCmd(t, "", "inspect", "--config", `{"unit":"C"}`, "echo").want(t, ExitOK, []string{"example.echo"}, nil)
}
