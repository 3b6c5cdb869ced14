//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/runtime"
)

// R49, R64: when the host disconnects (stdin ends), the adapter kills the commands it
// started before it exits. The adapter runs here without any process-tree supervision,
// so only the adapter itself can have ended the command.
func TestDisconnectKillsCommands(t *testing.T) {
	path := buildConsole(t)
	lock := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(path)
	cmd.Env = []string{"GORACE=" + raceEnv}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	conn := runtime.NewConn(stdout, stdin, nil)
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := conn.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(helper(t, "hang", lock))
	raw, err := conn.Call(ctx, consoleapi.Start.Name(), params)
	if err != nil {
		t.Fatal(err)
	}
	var started sessionResult
	if err := json.Unmarshal(raw, &started); err != nil {
		t.Fatal(err)
	}
	// Wait for the command to hold its lock.
	var out strings.Builder
	for !strings.HasSuffix(out.String(), "ready\n") {
		raw, err := conn.Call(ctx, consoleapi.Read.Name(), []byte(`{"session":`+itoa(started.Session)+`,"max_bytes":100,"wait_ms":1000}`))
		if err != nil {
			t.Fatal(err)
		}
		var r readResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		b, _ := base64.StdEncoding.DecodeString(r.Data)
		out.Write(b)
	}
	if lockFree(t, lock) {
		t.Fatal("the command does not hold its lock")
	}
	// A read waits in the adapter while the host disconnects.
	go func() {
		_, _ = conn.Call(context.Background(), consoleapi.Read.Name(), []byte(`{"session":`+itoa(started.Session)+`,"max_bytes":100,"wait_ms":15000}`))
	}()
	testkit.Eventually(t, wait, func() bool { return conn.InFlight() > 0 }, "the waiting read was never sent")
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("adapter exit: %v", err)
		}
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatal("the adapter did not exit after stdin ended")
	}
	if !lockFree(t, lock) {
		t.Fatal("the command outlived the adapter")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
