//go:build linux || darwin

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wait returns once a daemon started in the background answers: started before the
// daemon, it keeps trying, and the status right after it is answered (what the
// README's 'serve ... &' then 'wait' relies on). Without a daemon it gives up after
// --timeout with exit 3, saying why the last try failed.
func TestWait(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	waited := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := run([]string{"wait", "--socket", sock, "--timeout", "1m"}, strings.NewReader(""), &out, &errOut)
		waited <- result{code: code, stdout: out.String(), stderr: errOut.String()}
	}()
	// wait is trying before the socket exists.
	select {
	case r := <-waited:
		t.Fatalf("wait returned before any daemon was started: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan int, 1)
	go func() {
		var out, errOut bytes.Buffer
		served <- serve(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, []string{"--socket", sock, goodDir})
	}()
	defer func() {
		cancel()
		if code := <-served; code != ExitOK {
			t.Errorf("serve exited %d", code)
		}
	}()
	select {
	case r := <-waited:
		r.want(t, ExitOK, nil, nil)
		if r.stdout != "" || r.stderr != "" {
			t.Errorf("wait printed %q, %q; want nothing", r.stdout, r.stderr)
		}
	case <-time.After(time.Minute):
		t.Fatal("wait did not return after the daemon started")
	}
	runCmd(t, "", "status", "--socket", sock).want(t, ExitOK, []string{"health"}, nil)

	gone := filepath.Join(shortDir(t), "none.sock")
	start := time.Now()
	// 8 s: the first try must get to connect (and learn the socket is missing) before
	// the deadline, also on a loaded machine (2 s was too short under -race with
	// every core busy); a try cut short by it says only "timeout".
	r := runCmd(t, "", "wait", "--socket", gone, "--timeout", "8s")
	r.want(t, ExitBroken, nil, []string{"no answer within 8s", "the last try: cannot connect", "no such file"})
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("wait --timeout 8s took %v", d)
	}
	runCmd(t, "", "wait", "--socket", gone, "--timeout", "0s").want(t, ExitUsage, nil, []string{"--timeout"})
}

// An adapter that exits before it answers initialize is reported with what it said on
// standard error: the reason a user needs (here a missing interpreter), not only
// "exit status 127".
func TestCallReportsStartStderr(t *testing.T) {
	p := filepath.Join(shortDir(t), "noint_v1.0.0")
	if err := os.WriteFile(p, []byte("#!/usr/bin/env adapterkit-no-such-interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runCmd(t, "", "call", p, "a.b").want(t, ExitBroken, nil,
		[]string{"exit status 127", "the adapter's last standard error:", "adapterkit-no-such-interpreter", "No such file or directory"})
	r := runCmd(t, "", "call", "--json", p, "a.b")
	if !strings.Contains(r.stderr, `"stderr":["`) {
		t.Errorf("--json error has no stderr lines: %s", r.stderr)
	}
}
