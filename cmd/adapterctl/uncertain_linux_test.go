package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
)

// TestCallUncertainDaemonKilled: a daemon process killed (SIGKILL) while a call
// through it is under way: the call says its outcome is uncertain, with its own exit
// status, in text and in JSON.
func TestCallUncertainDaemonKilled(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		name := "text"
		if asJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(shortDir(t), "ctl.sock")
			cmd := exec.Command(os.Args[0], "serve", "--socket", sock, goodDir)
			cmd.Env = append(os.Environ(), asAdapterctl+"=1", "STATE_DIRECTORY="+shortDir(t))
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			br := bufio.NewReader(stdout)
			ready, _ := br.ReadString('\n')
			go func() {
				_, _ = bufio.NewReader(br).WriteTo(new(bytes.Buffer))
				exited <- cmd.Wait()
			}()
			defer func() {
				_ = cmd.Process.Kill()
				<-exited
			}()
			if !strings.HasPrefix(ready, "adapterctl serve: serving") {
				t.Fatalf("ready line %q\nstderr:\n%s", ready, stderr.String())
			}
			args := []string{"call", "--socket", sock, "echo", "example.echo.sleep", `{"ms":25000}`}
			if asJSON {
				args = append(args, "--json")
			}
			called := make(chan result, 1)
			go func() { called <- runCmd(t, "", args...) }()
			// The call is under way once the daemon counts it in flight.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := controlplane.Dial(ctx, sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for {
				st, err := c.Status(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.InFlight == 1 {
					break
				}
				select {
				case r := <-called:
					t.Fatalf("call ended before the daemon was killed: %+v", r)
				case <-time.After(20 * time.Millisecond):
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			var r result
			select {
			case r = <-called:
			case <-ctx.Done():
				t.Fatal("the call did not end after its daemon was killed")
			}
			if r.code != ExitUncertain {
				t.Errorf("exit %d, want %d (uncertain)\nstderr:\n%s", r.code, ExitUncertain, r.stderr)
			}
			const want = "the daemon's connection ended mid-call: the outcome is uncertain (the call may have run"
			if !asJSON {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr %q, want it to say %q", r.stderr, want)
				}
				return
			}
			var rep errorReport
			if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil {
				t.Fatalf("stderr is not one JSON object: %v\n%s", err, r.stderr)
			}
			if rep.Exit != ExitUncertain || !strings.Contains(rep.Error, want) {
				t.Errorf("JSON error %+v", rep)
			}
		})
	}
}
