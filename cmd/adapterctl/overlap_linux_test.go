package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServePolicyGrantOverlap: serve --policy refuses an adapter whose executable lies
// inside another adapter's write grant at its start (the call fails naming both), and
// a policy of which one section may write another's grant at once (exit status 2).
func TestServePolicyGrantOverlap(t *testing.T) {
	dir := shortDir(t)
	policy := writeFile(t, dir, "policy", "adapter *\nadapter thermometer\nallow-write "+goodDir+"\n", 0o600)
	sock := filepath.Join(dir, "ctl.sock")
	startDaemon(t, sock, "--socket", sock, "--policy", policy, goodDir)
	r := runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", "{}")
	if r.code == ExitOK {
		t.Fatalf("echo called though thermometer may write its executable:\n%s", r.stdout)
	}
	r.want(t, r.code, nil, []string{"adapter echo's executable " + good("echo_v1.2.0") + " lies inside adapter thermometer's write grant " + goodDir})

	bad := writeFile(t, dir, "bad", "adapter cache\nallow-write /srv\nadapter kv\nallow-read /srv/../srv/kv\n", 0o600)
	sock2 := filepath.Join(dir, "ctl2.sock")
	// Bounded: a serve that accepted the policy would serve until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := serve(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, []string{"--socket", sock2, "--policy", bad, goodDir})
	r = result{code: code, stdout: out.String(), stderr: errOut.String()}
	r.want(t, ExitUsage, nil, []string{"adapter kv's grant /srv/kv lies inside adapter cache's write grant /srv: refused"})
	if strings.Contains(r.stdout, "serving") {
		t.Errorf("served: %s", r.stdout)
	}
}
