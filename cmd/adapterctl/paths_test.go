package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rel returns path relative to the working directory (the package directory).
func rel(t *testing.T, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r, err := filepath.Rel(wd, path)
	if err != nil || filepath.IsAbs(r) {
		t.Skipf("no relative path from %s to %s", wd, path)
	}
	return r
}

// The paths a person types may be relative: DIR, --dir, $ADAPTERKIT_PATH and ADAPTER
// paths are taken from the working directory, and the absolute path used is shown on
// stderr (except with --json, whose stderr is for one error object). The library
// itself still refuses relative paths (R61, A31): adapterctl resolves them.
func TestRelativePaths(t *testing.T) {
	relGood := rel(t, goodDir)
	relEcho := rel(t, good("echo_v1.2.0"))
	note := func(given, abs string) string { return given + " is " + abs }
	tests := []struct {
		name     string
		env      string
		args     []string
		stdout   []string
		stderr   []string
		noStderr bool
	}{
		{"list DIR", "", []string{"list", relGood}, []string{good("echo_v1.2.0"), good("thermometer_v1.0.0")},
			[]string{"adapterctl list: " + note(relGood, goodDir)}, false},
		{"list --json", "", []string{"list", "--json", relGood}, []string{`"dir": "` + goodDir}, nil, true},
		{"list $ADAPTERKIT_PATH", relGood, []string{"list"}, []string{good("echo_v1.2.0")}, []string{note(relGood, goodDir)}, false},
		{"inspect --dir", "", []string{"inspect", "--dir", relGood, "thermometer"}, []string{good("thermometer_v1.0.0")},
			[]string{note(relGood, goodDir)}, false},
		{"call ADAPTER path", "", []string{"call", relEcho, "example.echo.echo", `{"a":1}`}, []string{`{"a":1}`},
			[]string{note(relEcho, good("echo_v1.2.0"))}, false},
		{"call --json", "", []string{"call", "--json", relEcho, "example.echo.echo"}, []string{`{}`}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(pathEnv, tt.env)
			r := runCmd(t, "", tt.args...)
			r.want(t, ExitOK, tt.stdout, tt.stderr)
			if tt.noStderr && r.stderr != "" {
				t.Errorf("stderr %q, want nothing with --json", r.stderr)
			}
		})
	}
	// A relative path that leads nowhere is reported with the absolute path tried.
	missing := filepath.Join("no", "such", "dir")
	abs, _ := filepath.Abs(missing)
	r := runCmd(t, "", "list", missing)
	r.want(t, ExitNotFound, nil, []string{note(missing, abs), "does not exist"})
	if !strings.Contains(r.stderr, abs) {
		t.Errorf("the error does not show the absolute path %s:\n%s", abs, r.stderr)
	}
}
