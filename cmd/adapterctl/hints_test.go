package main

import (
	"runtime"
	"testing"
)

// Errors say what to do: the hint of each kind of failure, in the text report and as
// "hint" in the JSON one.
func TestErrorHints(t *testing.T) {
	noexec := writeFile(t, t.TempDir(), exe("plain_v1.0.0"), "#!/bin/sh\n", 0o644)
	tests := []struct {
		name string
		args []string
		code int
		hint string
	}{
		{"unknown method", []string{"call", good("echo_v1.2.0"), "example.echo.nope"}, ExitFailed, "what to do: 'adapterctl inspect ADAPTER' lists the methods"},
		{"no such name", []string{"call", "--dir", goodDir, "nosuch", "a.b"}, ExitNotFound, "what to do: 'adapterctl list DIR' shows every adapter found"},
		{"text on stdout", []string{"call", bad("garbage_v1.0.0"), "bad.adapter.echo"}, ExitBroken, "what to do: an adapter writes nothing but frames to stdout"},
		{"json", []string{"call", "--json", good("echo_v1.2.0"), "example.echo.nope"}, ExitFailed, `"hint":"'adapterctl inspect ADAPTER' lists`},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name string
			args []string
			code int
			hint string
		}{"not executable", []string{"call", noexec, "a.b"}, ExitBroken, "what to do: make the file executable (chmod +x FILE)"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runCmd(t, "", tt.args...).want(t, tt.code, nil, []string{tt.hint})
		})
	}
}
