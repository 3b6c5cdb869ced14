//go:build linux || darwin

package main

import (
	"bytes"
	"context"
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
	r := runCmd(t, "", "wait", "--socket", gone, "--timeout", "300ms")
	r.want(t, ExitBroken, nil, []string{"no answer within 300ms", "the last try: cannot connect", "no such file"})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("wait --timeout 300ms took %v", d)
	}
	runCmd(t, "", "wait", "--socket", gone, "--timeout", "0s").want(t, ExitUsage, nil, []string{"--timeout"})
}
