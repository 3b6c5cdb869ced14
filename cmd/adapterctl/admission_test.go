//go:build linux || darwin

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
)

// markerAdapter is a shell adapter that appends a line to marker each time it is
// executed, then runs the Go echo at real: it would serve, so only a refusal keeps
// it from being started.
func markerAdapter(marker, real string) []byte {
	return []byte("#!/bin/sh\necho started >> '" + marker + "'\nexec '" + real + "' \"$@\"\n")
}

// starts counts the lines a marker adapter wrote.
func starts(t *testing.T, marker string) int {
	t.Helper()
	b, err := os.ReadFile(marker)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "started")
}

// A broken newest file present before the first call (it arrived while the daemon
// was down) is refused at the first open and the older version serves: by 'upgrade
// NAME' before any call (which opens NAME under the same rule), and by calls. After
// a restart with the record saved the older version serves at once and the broken
// file is not started again.
func TestServeAdmissionBrokenNewest(t *testing.T) {
	dir, src, install := upgradeDir(t)
	install(exe("echo_v1.2.0"), src)
	marker := filepath.Join(shortDir(t), "broken.starts")
	install("echo_v1.2.9", []byte("#!/bin/sh\necho started >> '"+marker+"'\nexit 7\n"))
	state := filepath.Join(shortDir(t), "state")
	sock := filepath.Join(shortDir(t), "ctl.sock")
	args := []string{"--socket", sock, "--state-dir", state, dir}
	d := startDaemon(t, sock, args...)

	r := runCmd(t, "", "upgrade", "--socket", sock, "echo")
	r.want(t, ExitFailed, []string{"echo: upgrade refused, 1.2.0 keeps serving:", "echo_v1.2.9"}, nil)
	if !regexp.MustCompile(`echo +1\.2\.0 +running`).MatchString(r.stdout) {
		t.Fatalf("upgrade before the first call:\n%s", r.stdout)
	}
	for range 5 {
		runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)
	}
	if n := starts(t, marker); n != 1 {
		t.Fatalf("the broken 1.2.9 was started %d times, want once", n)
	}
	var js controlplane.StatusResult
	decodeStrict(t, runCmd(t, "", "status", "--json", "--socket", sock).stdout, &js)
	if js.Health != "ok" || len(js.Refused) != 1 || js.Refused[0].Version != "1.2.9" || js.Refused[0].Serving != "1.2.0" {
		t.Fatalf("status: health %s, refused %+v", js.Health, js.Refused)
	}
	if r := d.stop(t); r.code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", r.code, r.stderr)
	}

	startDaemon(t, sock, args...)
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)
	if st := runCmd(t, "", "status", "--socket", sock); !regexp.MustCompile(`echo +1\.2\.0 +running`).MatchString(st.stdout) {
		t.Fatalf("after a restart:\n%s", st.stdout)
	}
	if n := starts(t, marker); n != 1 {
		t.Fatalf("after a restart the broken 1.2.9 was started again (%d starts)", n)
	}
}

// --pin NAME=SHA256 guards every start of NAME, the first one included: an unpinned
// newer file present at start is never executed (by name, by path, or by
// capabilities); the newest pinned version serves.
func TestServePinGuardsFirstOpen(t *testing.T) {
	dir, src, install := upgradeDir(t)
	install(exe("echo_v1.2.0"), src)
	marker := filepath.Join(shortDir(t), "unpinned.starts")
	install("echo_v1.2.5", markerAdapter(marker, filepath.Join(dir, exe("echo_v1.2.0"))))
	sum := sha256.Sum256(src)
	sock := filepath.Join(shortDir(t), "ctl.sock")
	startDaemon(t, sock, "--socket", sock, "--pin", "echo="+hex.EncodeToString(sum[:]), dir)
	for range 3 {
		runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{}`).want(t, ExitOK, nil, nil)
	}
	if r := runCmd(t, "", "call", "--socket", sock, filepath.Join(dir, "echo_v1.2.5"), "example.echo.echo", `{}`); r.code == ExitOK {
		t.Fatalf("call by path of the unpinned file succeeded:\n%s", r.stdout)
	}
	runCmd(t, "", "capabilities", "--socket", sock)
	if n := starts(t, marker); n != 0 {
		t.Fatalf("the unpinned 1.2.5 was executed %d times", n)
	}
	if st := runCmd(t, "", "status", "--socket", sock); !regexp.MustCompile(`echo +1\.2\.0 +running`).MatchString(st.stdout) ||
		!strings.Contains(st.stdout, "echo 1.2.5 refused at") {
		t.Fatalf("status:\n%s", st.stdout)
	}
}
