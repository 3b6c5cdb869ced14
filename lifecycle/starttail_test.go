//go:build linux

package lifecycle_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/wire"
)

// An adapter that exits before it answers initialize says why: the handshake error
// carries the last lines it wrote to standard error, bounded and escaped, whether or
// not the host keeps the adapter's standard error, and the host's own Stderr still gets
// every byte. "exit status 127" alone does not tell a user that node is missing.
func TestHandshakeExitReportsStderr(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A script whose interpreter is not installed: env says so on stderr and exits 127.
	noInterp := write("nointerp", "#!/usr/bin/env adapterkit-no-such-interpreter\n")
	// Many lines, one very long, one with control characters and invalid UTF-8.
	noisy := write("noisy", "#!/bin/sh\n"+
		"for i in 1 2 3 4 5 6 7 8; do echo \"line $i\" >&2; done\n"+
		"printf 'bell\\007 and \\377 byte\\n' >&2\n"+
		"head -c 1000 /dev/zero | tr '\\0' x >&2; echo >&2\n"+
		"echo 'the reason' >&2\nexit 3\n")
	quiet := write("quiet", "#!/bin/sh\nexit 4\n")
	for _, tc := range []struct {
		name, path string
		stderr     bool // the host keeps the adapter's stderr itself too
		want, not  []string
		lines      int
	}{
		{"missing interpreter", noInterp, false, []string{"adapterkit-no-such-interpreter", "No such file or directory"}, nil, 1},
		{"missing interpreter, host keeps stderr", noInterp, true, []string{"No such file or directory"}, nil, 1},
		{"bounded and escaped", noisy, false, []string{`"bell\a and \xff byte"`, `"the reason"`, `"` + strings.Repeat("x", 240) + `"…`},
			[]string{"line 1", "line 5", strings.Repeat("x", 241)}, 5},
		{"nothing written", quiet, false, nil, []string{"standard error"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kept bytes.Buffer // read only after Open returned: the tree is closed then
			cfg := lifecycle.Config{Path: tc.path}
			if tc.stderr {
				cfg.Stderr = &kept
			}
			_, err := lifecycle.Open(ctxT(t), cfg)
			var oe *lifecycle.OpenError
			if !errors.As(err, &oe) || oe.Stage != lifecycle.StageHandshake || !errors.Is(err, wire.ProcessExited) {
				t.Fatalf("err = %v, want a handshake failure because the process exited", err)
			}
			if len(oe.Stderr) != tc.lines {
				t.Errorf("Stderr = %q, want %d lines", oe.Stderr, tc.lines)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(msg, n) {
					t.Errorf("error has %q:\n%s", n, msg)
				}
			}
			if tc.stderr && !strings.Contains(kept.String(), "No such file or directory") {
				t.Errorf("Config.Stderr got %q, want everything the adapter wrote", kept.String())
			}
		})
	}
}
