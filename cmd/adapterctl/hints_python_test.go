//go:build !windows

package main

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// A Python adapter whose interpreter cannot read its standard library (under --sandbox:
// a pyenv or /opt Python whose prefix is not granted) gets a hint naming the prefix to
// grant, found from the adapter's #! line.
func TestPythonPrefixHint(t *testing.T) {
	tmp := t.TempDir()
	abs := writeFile(t, tmp, "abs_v1.0.0", "#!/opt/py/3.12/bin/python3\nprint()\n", 0o755)
	env := writeFile(t, tmp, "env_v1.0.0", "#!/usr/bin/env python3\nprint()\n", 0o755)
	open := func(path string, lines ...string) error {
		for i, l := range lines {
			lines[i] = strconv.Quote(l)
		}
		return &lifecycle.OpenError{Path: path, Stage: lifecycle.StageHandshake, Err: errors.New("exited"), Stderr: lines}
	}
	for _, c := range []struct {
		name string
		err  error
		want string // "" for no hint
	}{
		{"prefix named by the #! line", open(abs, "Could not find platform independent libraries <prefix>", "Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding", "ModuleNotFoundError: No module named 'encodings'"),
			"--allow-read " + filepath.FromSlash("/opt/py/3.12")},
		{"interpreter found through env", open(env, "ModuleNotFoundError: No module named 'encodings'"), "--allow-read PREFIX"},
		{"another failure", open(abs, "ModuleNotFoundError: No module named 'requests'"), ""},
		{"not a start failure", errors.New("No module named 'encodings'"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := hintFor(c.err)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("hint %q, want one with %q", got, c.want)
			}
		})
	}
}
