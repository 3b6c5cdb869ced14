package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/wire"
)

// R61, A31 applied to commands: never resolved, never through a shell.
func TestStartRefuses(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		command string
		code    wire.Code
	}{
		{"no command", "", wire.CodeInvalid},
		{"relative path", "bin/echo", wire.CodeInvalid},
		{"bare name", "echo", wire.CodeInvalid},
		{"missing file", filepath.Join(dir, "missing"), wire.CodeInvalid},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases,
			struct {
				name    string
				command string
				code    wire.Code
			}{"not executable", plain, wire.CodeDenied},
			struct {
				name    string
				command string
				code    wire.Code
			}{"a directory", dir, wire.CodeDenied})
	}
	c := newTestConsole(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.start(context.Background(), startParams{Command: tc.command})
			wantCode(t, err, tc.code)
		})
	}
	if n := len(c.sessions); n != 0 {
		t.Fatalf("%d sessions left by refused starts", n)
	}
}

func TestReadRefuses(t *testing.T) {
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "print", "x"))
	for _, tc := range []struct {
		name string
		p    readParams
	}{
		{"max_bytes 0", readParams{Session: id, MaxBytes: 0}},
		{"max_bytes above the cap", readParams{Session: id, MaxBytes: maxReadBytes + 1}},
		{"negative wait", readParams{Session: id, MaxBytes: 1, WaitMS: -1}},
		{"wait near the call deadline (A34)", readParams{Session: id, MaxBytes: 1, WaitMS: maxWait.Milliseconds() + 1}},
		{"unknown session", readParams{Session: id + 1, MaxBytes: 1}},
		{"zero session id", readParams{MaxBytes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.read(context.Background(), tc.p)
			wantCode(t, err, wire.CodeInvalid)
		})
	}
	if _, err := c.close(context.Background(), sessionParams{Session: id + 1}); err == nil {
		t.Fatal("closing an unknown session succeeded")
	} else {
		wantCode(t, err, wire.CodeInvalid)
	}
}

// Stdout and stderr arrive through one stream, then eof; close reports the exit.
func TestOutputThenEOF(t *testing.T) {
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "print", "hello"))
	if got := string(readAll(t, c, id, 3)); got != "helloerr:hello" {
		t.Fatalf("output %q, want %q", got, "helloerr:hello")
	}
	// After eof a read answers eof again at once, without waiting.
	r, err := c.read(context.Background(), readParams{Session: id, MaxBytes: 10, WaitMS: maxWait.Milliseconds()})
	if err != nil || !r.EOF || r.Data != "" {
		t.Fatalf("read after eof: %+v, %v", r, err)
	}
	res, err := c.close(context.Background(), sessionParams{Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Session != id {
		t.Fatalf("close: %+v", res)
	}
	// The session is gone.
	_, err = c.read(context.Background(), readParams{Session: id, MaxBytes: 1})
	wantCode(t, err, wire.CodeInvalid)
}

// The buffer is bounded: a command that writes more than it holds waits until the host
// reads, and nothing is lost or repeated.
func TestOutputBoundedAndComplete(t *testing.T) {
	const n = 3 * bufferSize
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "flood", "3145728"))
	s, err := c.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.buf) == bufferSize
	}, "the buffer never filled")
	// The buffer is full and the pipe holds far less than the rest: the command cannot
	// have finished writing, so it cannot have exited.
	select {
	case <-s.exited:
		t.Fatal("the command exited although its output was not read")
	default:
	}
	got := readAll(t, c, id, 256<<10)
	if !bytes.Equal(got, pattern(n)) {
		t.Fatalf("read %d bytes, not the %d written", len(got), n)
	}
	res, err := c.close(context.Background(), sessionParams{Session: id})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("close: %+v, %v", res, err)
	}
}

// A34: a read with nothing to return answers empty when its wait ends, not at the call
// deadline. R38: a cancelled read answers aborted.
func TestReadWaitAndCancel(t *testing.T) {
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "hang"))
	readUntil(t, c, id, "ready\n")

	r, err := c.read(context.Background(), readParams{Session: id, MaxBytes: 10, WaitMS: 1})
	if err != nil || r.Data != "" || r.EOF {
		t.Fatalf("read with nothing to return: %+v, %v", r, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.read(ctx, readParams{Session: id, MaxBytes: 10, WaitMS: maxWait.Milliseconds()})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		wantCode(t, err, wire.CodeAborted)
	case <-time.After(wait):
		t.Fatal("the cancelled read did not return")
	}
}

// A read waiting on a session that is closed meanwhile answers closed.
func TestCloseEndsWaitingRead(t *testing.T) {
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "hang"))
	readUntil(t, c, id, "ready\n")
	s, _ := c.lookup(id)
	done := make(chan error, 1)
	go func() {
		_, err := c.read(context.Background(), readParams{Session: id, MaxBytes: 10, WaitMS: maxWait.Milliseconds()})
		done <- err
	}()
	// Wait until the read waits on the session's state, then close the session.
	waitWaiting(t, s)
	res, err := c.close(context.Background(), sessionParams{Session: id})
	if err != nil || res.ExitCode != -1 {
		t.Fatalf("close: %+v, %v", res, err)
	}
	select {
	case err := <-done:
		wantCode(t, err, wire.CodeClosed)
	case <-time.After(wait):
		t.Fatal("the read did not return when its session closed")
	}
}

// waitWaiting waits until a reader is blocked on s: the goroutine dump is the only
// event available, so poll for the read's select.
func waitWaiting(t *testing.T, s *session) {
	t.Helper()
	testkit.Eventually(t, wait, func() bool {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		return bytes.Contains(buf[:n], []byte("(*console).read"))
	}, "no read is waiting")
}

func TestSessionLimit(t *testing.T) {
	c := newTestConsole(t)
	for range maxSessions {
		mustStart(t, c, helper(t, "print", "x"))
	}
	_, err := c.start(context.Background(), helper(t, "print", "x"))
	wantCode(t, err, wire.CodeBusy)
	// Closing one makes room again.
	if _, err := c.close(context.Background(), sessionParams{Session: 1}); err != nil {
		t.Fatal(err)
	}
	mustStart(t, c, helper(t, "print", "x"))
}

// After closeAll (the host disconnected) nothing new starts.
func TestCloseAllRefusesStarts(t *testing.T) {
	c := newTestConsole(t)
	id := mustStart(t, c, helper(t, "hang"))
	readUntil(t, c, id, "ready\n")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := c.closeAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(c.sessions); n != 0 {
		t.Fatalf("%d sessions after closeAll", n)
	}
	_, err := c.start(context.Background(), helper(t, "print", "x"))
	wantCode(t, err, wire.CodeClosed)
}
