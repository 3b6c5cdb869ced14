//go:build !windows

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// A Node adapter that cannot load a module it imports (under --sandbox: a package that
// `npm install FOLDER` linked to a folder not granted) gets a hint naming the folder to
// grant with --allow-read: the one Node named, or else the real folder of the linked
// packages near the launcher's entry point (Node's last lines often name none).
func TestNodeModuleHint(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sdk := filepath.Join(tmp, "adapterkit", "sdk", "typescript")
	project := filepath.Join(tmp, "hello")
	for _, d := range []string{filepath.Join(sdk, "dist"), filepath.Join(project, "node_modules", "@adapterkit"), filepath.Join(project, "dist"), filepath.Join(project, "adapters")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, sdk, "package.json", `{"name":"@adapterkit/sdk"}`, 0o644)
	if err := os.Symlink(sdk, filepath.Join(project, "node_modules", "@adapterkit", "sdk")); err != nil {
		t.Fatal(err)
	}
	launcher := writeFile(t, filepath.Join(project, "adapters"), "hello_v1.0.0",
		"#!/usr/bin/node\nimport(\""+filepath.Join(project, "dist", "hello.js")+"\");\n", 0o755)
	quote := func(lines ...string) []string {
		for i, l := range lines {
			lines[i] = strconv.Quote(l)
		}
		return lines
	}
	open := func(stderr []string) error {
		return &lifecycle.OpenError{Path: launcher, Stage: lifecycle.StageHandshake, Err: errors.New("exited"), Stderr: stderr}
	}
	for _, c := range []struct {
		name string
		err  error
		want string // "" for no hint
	}{
		{"not found, no path in the tail", open(quote("    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {", "  code: 'ERR_MODULE_NOT_FOUND'", "}", "Node.js v20.20.2")),
			"--allow-read " + sdk},
		{"not readable, path named", open(quote("  code: 'EACCES',", "  syscall: 'open',", "  path: '"+filepath.Join(sdk, "dist", "index.js")+"'", "}")),
			"--allow-read " + sdk},
		{"not found, package named", open(quote("Error [ERR_MODULE_NOT_FOUND]: Cannot find package '" + filepath.Join(sdk, "dist", "x.js") + "' imported from " + launcher)),
			"--allow-read " + sdk},
		{"another failure", open(quote("/usr/bin/env: 'node': No such file or directory")), ""},
		{"not a start failure", errors.New("ERR_MODULE_NOT_FOUND"), ""},
	} {
		got := nodeModuleHint(c.err)
		if c.want == "" && got != "" || c.want != "" && (!strings.Contains(got, c.want) || !strings.Contains(got, "--sandbox")) {
			t.Errorf("%s: hint %q, want one with %q", c.name, got, c.want)
		}
		if hintFor(c.err) != got {
			t.Errorf("%s: hintFor does not give the node hint", c.name)
		}
	}
}
