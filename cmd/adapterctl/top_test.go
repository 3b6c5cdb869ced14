//go:build linux || darwin

package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// status and top show each adapter's figures; serve logs its adapters' records
// attributed to them.
func TestDaemonFigures(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	d := startDaemon(t, sock, "--socket", sock, "--log", "info", goodDir)
	for _, probe := range []string{"inlet", "inlet", "nosuch"} {
		code := ExitOK
		if probe == "nosuch" {
			code = ExitFailed
		}
		runCmd(t, "", "call", "--socket", sock, "thermometer", "example.device.read", `{"probe":"`+probe+`"}`).want(t, code, nil, nil)
	}
	// Standard error is read as it comes: wait until the last line has been.
	var r result
	testkit.Within(10*time.Second, func() bool {
		r = runCmd(t, "", "status", "--socket", sock)
		return strings.Contains(r.stdout, "(last 3 lines)")
	})
	r.want(t, ExitOK, []string{"stderr of thermometer (last 3 lines):", `"@message":"reading"`}, nil)
	if !regexp.MustCompile(`thermometer +example\.device\.read +3 +invalid=1 +0 +0 +[0-9.]+ms +[0-9.]+ms`).MatchString(r.stdout) {
		t.Errorf("status lacks the method's figures:\n%s", r.stdout)
	}
	if !regexp.MustCompile(`thermometer +[0-9.]+ (KiB|MiB) +[0-9.]+ (KiB|MiB) +[0-9.]+s +0 +-`).MatchString(r.stdout) {
		t.Errorf("status lacks the resource figures:\n%s", r.stdout)
	}
	top := runCmd(t, "", "top", "--once", "--socket", sock)
	top.want(t, ExitOK, nil, nil)
	if !strings.Contains(top.stdout, "NAME         VERSION  STATE    PID") || !regexp.MustCompile(`thermometer +1\.0\.0 +running +[0-9]+ +- +[0-9.]+s .* 3 +- +1 +0 +[0-9.]+ms +0 +0`).MatchString(top.stdout) {
		t.Errorf("top --once:\n%s", top.stdout)
	}
	js := runCmd(t, "", "top", "--once", "--json", "--socket", sock)
	var rows []struct {
		Name   string `json:"name"`
		Calls  uint64 `json:"calls"`
		Errors uint64 `json:"errors"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Name != "thermometer" || rows[0].Calls != 3 || rows[0].Errors != 1 {
		t.Errorf("top --once --json: %v %s", err, js.stdout)
	}
	out := d.stop(t)
	if n := strings.Count(out.stderr, "[INFO]  adapterctl.thermometer: reading: pid="); n != 3 {
		t.Errorf("serve logged %d attributed reading records, want 3:\n%s", n, out.stderr)
	}
}
