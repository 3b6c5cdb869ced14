//go:build linux || darwin

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
)

// adapterctl upgrade: nothing open yet; a new version taking over (and shown by
// status); a broken one refused with exit status 1; the JSON answer; bad arguments.
func TestUpgradeCommand(t *testing.T) {
	dir, src, install := upgradeDir(t)
	install(exe("echo_v1.2.0"), src)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	startDaemon(t, sock, "--socket", sock, dir)

	runCmd(t, "", "upgrade", "--socket", sock).want(t, ExitOK, []string{"no adapter is open"}, nil)
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)

	install(exe("echo_v1.3.0"), src)
	r := runCmd(t, "", "upgrade", "--socket", sock, "echo")
	r.want(t, ExitOK, nil, nil)
	if !regexp.MustCompile(`echo +1\.3\.0 +running +[0-9]+ +0 +1 `).MatchString(r.stdout) {
		t.Fatalf("upgrade:\n%s", r.stdout)
	}
	st := runCmd(t, "", "status", "--socket", sock)
	if !regexp.MustCompile(`NAME +VERSION +STATE +PID +RESTARTS +UPGRADES`).MatchString(st.stdout) || !regexp.MustCompile(`echo +1\.3\.0 +running +[0-9]+ +0 +1 `).MatchString(st.stdout) {
		t.Fatalf("status:\n%s", st.stdout)
	}

	install("echo_v1.4.0", []byte("#!/bin/sh\nexit 7\n"))
	r = runCmd(t, "", "upgrade", "--socket", sock, "echo")
	r.want(t, ExitFailed, []string{"echo: upgrade refused, 1.3.0 keeps serving:", "echo_v1.4.0"}, nil)
	js := runCmd(t, "", "upgrade", "--json", "--socket", sock)
	var res controlplane.UpgradeResult
	decodeStrict(t, js.stdout, &res)
	if len(res.Adapters) != 1 || res.Adapters[0].Version != "1.3.0" || res.Adapters[0].UpgradeError == "" {
		t.Fatalf("upgrade --json: %+v", res)
	}

	runCmd(t, "", "upgrade", "--socket", sock, "echo", "more").want(t, ExitUsage, nil, []string{"at most one NAME"})
	runCmd(t, "", "upgrade", "--socket", sock, "Not-A-Name").want(t, ExitUsage, nil, nil)
}

// serve --upgrade-digest: a new version whose digest is not listed for its name is
// refused; one that is listed takes over. A malformed value is a usage error.
func TestServeUpgradeDigest(t *testing.T) {
	dir, src, install := upgradeDir(t)
	install(exe("echo_v1.2.0"), src)
	good := append(slices.Clone(src), "allowed"...)
	sum, first := sha256.Sum256(good), sha256.Sum256(src)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	// A pin guards every start: the serving 1.2.0's digest is listed too.
	startDaemon(t, sock, "--socket", sock, "--upgrade-digest", "echo="+hex.EncodeToString(sum[:]),
		"--upgrade-digest", "echo="+hex.EncodeToString(first[:]), dir)
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)

	install(exe("echo_v1.3.0"), append(slices.Clone(src), "unlisted"...))
	runCmd(t, "", "upgrade", "--socket", sock, "echo").want(t, ExitFailed, []string{"1.2.0 keeps serving", "SHA-256"}, nil)
	install(exe("echo_v1.4.0"), good)
	r := runCmd(t, "", "upgrade", "--socket", sock, "echo")
	r.want(t, ExitOK, nil, nil)
	if !regexp.MustCompile(`echo +1\.4\.0 +running`).MatchString(r.stdout) {
		t.Fatalf("upgrade:\n%s", r.stdout)
	}

	runCmd(t, "", "serve", "--socket", sock+"2", "--upgrade-digest", "echo=abc", dir).want(t, ExitUsage, nil, []string{"64 hexadecimal digits"})
	runCmd(t, "", "serve", "--socket", sock+"2", "--upgrade-digest", "Echo", dir).want(t, ExitUsage, nil, []string{"NAME=SHA256"})
}

// upgradeDir returns an adapter directory, the Go echo's bytes, and an install that
// puts a file into the directory by a rename from elsewhere, as an operator's mv does.
func upgradeDir(t *testing.T) (dir string, src []byte, install func(name string, b []byte)) {
	t.Helper()
	dir, staging := shortDir(t), shortDir(t)
	src, err := os.ReadFile(filepath.Join(goodDir, exe("echo_v1.2.0")))
	if err != nil {
		t.Fatal(err)
	}
	install = func(name string, b []byte) {
		t.Helper()
		p := filepath.Join(staging, name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, src, install
}

// A newer file refused (here by --upgrade-digest) stays refused across a restart of
// serve with the same --state-dir: the version that served before serves again, and
// status (human and JSON) says which file was refused, when, why, and what serves.
// --retry tries it again; it needs NAME.
func TestServeRestartKeepsRefusal(t *testing.T) {
	dir, src, install := upgradeDir(t)
	install(exe("echo_v1.2.0"), src)
	state := filepath.Join(shortDir(t), "state")
	sock := filepath.Join(shortDir(t), "ctl.sock")
	first := sha256.Sum256(src)
	args := []string{"--socket", sock, "--state-dir", state, "--pin", "echo=" + hex.EncodeToString(first[:]), dir}
	d := startDaemon(t, sock, args...)
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)
	install(exe("echo_v1.3.0"), append(slices.Clone(src), "unlisted"...))
	runCmd(t, "", "upgrade", "--socket", sock, "echo").want(t, ExitFailed, []string{"1.2.0 keeps serving", "SHA-256"}, nil)
	if r := d.stop(t); r.code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", r.code, r.stderr)
	}

	startDaemon(t, sock, args...)
	refusedLine := regexp.MustCompile(`echo 1\.3\.0 refused at [0-9TZ:-]+: .*SHA-256.*; serving 1\.2\.0 \(`)
	st := runCmd(t, "", "status", "--socket", sock)
	if !refusedLine.MatchString(st.stdout) || !strings.Contains(st.stdout, "upgrade --retry echo") {
		t.Fatalf("status after a restart:\n%s", st.stdout)
	}
	var js controlplane.StatusResult
	decodeStrict(t, runCmd(t, "", "status", "--json", "--socket", sock).stdout, &js)
	if len(js.Refused) != 1 || js.Refused[0].Version != "1.3.0" || js.Refused[0].Serving != "1.2.0" || !js.Refused[0].Pin ||
		js.Refused[0].Path != filepath.Join(dir, exe("echo_v1.3.0")) {
		t.Fatalf("status --json refused: %+v", js.Refused)
	}
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)
	if st := runCmd(t, "", "status", "--socket", sock); !regexp.MustCompile(`echo +1\.2\.0 +running`).MatchString(st.stdout) {
		t.Fatalf("after a restart the call did not go to 1.2.0:\n%s", st.stdout)
	}
	r := runCmd(t, "", "call", "--socket", sock, "echo@1.3.0", "example.echo.echo", `{}`)
	if r.code == ExitOK || !strings.Contains(r.stderr, "refused at") {
		t.Fatalf("call echo@1.3.0: exit %d\n%s", r.code, r.stderr)
	}

	runCmd(t, "", "upgrade", "--socket", sock, "--retry").want(t, ExitUsage, nil, []string{"--retry needs the adapter NAME"})
	runCmd(t, "", "upgrade", "--socket", sock, "--retry", "echo").want(t, ExitFailed, []string{"1.2.0 keeps serving", "SHA-256"}, nil)
	runCmd(t, "", "serve", "--socket", sock+"2", "--state-dir", "", dir).want(t, ExitUsage, nil, []string{"--state-dir needs a directory"})
}

// A state file serve cannot trust keeps it from starting: exit status 3, and a
// message naming the file and why.
func TestServeRefusesUntrustedState(t *testing.T) {
	state := shortDir(t)
	if err := os.WriteFile(filepath.Join(state, "refused.json"), []byte(`{"version":1,"refused":[]}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(state, "refused.json"), 0o666); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "ctl.sock")
	runCmd(t, "", "serve", "--socket", sock, "--state-dir", state, goodDir).want(t, ExitBroken, nil,
		[]string{filepath.Join(state, "refused.json"), "writable by group or others"})
}
