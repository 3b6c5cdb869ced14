package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsolationFlag: --isolation of call and serve reaches the adapters they start
// (their status says the PID namespace was turned off); a value not listed and a
// --isolation sent to a daemon are usage errors.
func TestIsolationFlag(t *testing.T) {
	runCmd(t, "", "call", "--isolation", "none", "--dir", goodDir, "echo", "example.echo.echo").
		want(t, ExitUsage, nil, []string{"want one of auto, no-pid-namespace, process-group, no-user-namespace"})

	sock := filepath.Join(shortDir(t), "ctl.sock")
	d := startDaemon(t, sock, "--socket", sock, "--isolation", "no-pid-namespace", goodDir)
	runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo").want(t, ExitOK, nil, nil)
	runCmd(t, "", "call", "--socket", sock, "--isolation", "auto", "echo", "example.echo.echo").
		want(t, ExitUsage, nil, []string{"--isolation cannot be used with --socket"})
	st := runCmd(t, "", "status", "--json", "--socket", sock)
	var status struct {
		Adapters []struct {
			Mechanism string `json:"mechanism"`
			Dropped   []struct {
				Reason string `json:"reason"`
			} `json:"dropped"`
		} `json:"adapters"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || len(status.Adapters) != 1 {
		t.Fatalf("status: %v\n%s%s", err, st.stdout, st.stderr)
	}
	a := status.Adapters[0]
	if strings.Contains(a.Mechanism, "pidns") || !strings.Contains(st.stdout, "turned off by Config.Isolation (IsolationNoPIDNamespace)") {
		t.Errorf("serve --isolation no-pid-namespace did not reach the adapter: %+v", a)
	}
	d.stop(t)
}
