package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// The test binary doubles as the commands the console runs: started with helperArg as
// its first argument, it acts out the mode named by the second instead of testing.
const helperArg = "console-test-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	// Helpers built with -race would otherwise linger a second at exit.
	os.Setenv("GORACE", raceEnv)
	goleak.VerifyTestMain(m)
}

// raceEnv stops the race detector's pause at exit in helper processes.
const raceEnv = "atexit_sleep_ms=0"

// runHelper acts out one helper mode and returns the exit code.
//
//	print TEXT   writes TEXT to stdout, then "err:TEXT" to stderr; exits 0
//	flood N      writes N bytes of pattern(N) to stdout; exits 3
//	hang [LOCK]  holds an exclusive lock on LOCK (Unix), writes "ready\n", never exits
func runHelper(mode string, args []string) int {
	switch {
	case mode == "print" && len(args) == 1:
		fmt.Fprint(os.Stdout, args[0])
		fmt.Fprint(os.Stderr, "err:"+args[0])
		return 0
	case mode == "flood" && len(args) == 1:
		var n int
		if _, err := fmt.Sscan(args[0], &n); err != nil {
			return 2
		}
		if _, err := os.Stdout.Write(pattern(n)); err != nil {
			return 2
		}
		return 3
	case mode == "hang" && len(args) <= 1:
		if len(args) == 1 {
			if err := holdLock(args[0]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		fmt.Fprintln(os.Stdout, "ready")
		select {}
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode, args)
	return 2
}

// pattern returns n bytes that are not all alike, so a lost or repeated chunk shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%23 + i/(1<<16)%3)
	}
	return b
}

// wait bounds every wait for an event so that a broken test fails instead of hanging;
// nothing asserts on time.
const wait = 30 * time.Second

// self is the path of the test binary, the command of every helper.
func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func helper(t testing.TB, mode string, args ...string) startParams {
	return startParams{Command: self(t), Args: append([]string{helperArg, mode}, args...)}
}

// newTestConsole returns a console whose sessions are all ended when the test ends.
func newTestConsole(t *testing.T) *console {
	c := newConsole(nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := c.closeAll(ctx); err != nil {
			t.Errorf("closeAll: %v", err)
		}
	})
	return c
}

func mustStart(t *testing.T, c *console, p startParams) int64 {
	t.Helper()
	r, err := c.start(context.Background(), p)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return r.Session
}

// readAll reads a session until eof with chunks of at most max bytes.
func readAll(t *testing.T, c *console, id int64, max int) []byte {
	t.Helper()
	var out bytes.Buffer
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		r, err := c.read(context.Background(), readParams{Session: id, MaxBytes: max, WaitMS: 1000})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		data, err := base64.StdEncoding.DecodeString(r.Data)
		if err != nil {
			t.Fatalf("data is not base64: %v", err)
		}
		if len(data) > max {
			t.Fatalf("read returned %d bytes, asked for at most %d", len(data), max)
		}
		out.Write(data)
		if r.EOF {
			return out.Bytes()
		}
	}
	t.Fatalf("no eof after %d bytes", out.Len())
	return nil
}

// readUntil reads a session until its output so far ends with suffix.
func readUntil(t *testing.T, c *console, id int64, suffix string) {
	t.Helper()
	var out bytes.Buffer
	deadline := time.Now().Add(wait)
	for !bytes.HasSuffix(out.Bytes(), []byte(suffix)) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never ended with %q", out.Bytes(), suffix)
		}
		r, err := c.read(context.Background(), readParams{Session: id, MaxBytes: 4096, WaitMS: 1000})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		data, _ := base64.StdEncoding.DecodeString(r.Data)
		out.Write(data)
		if r.EOF {
			t.Fatalf("eof before %q; output %q", suffix, out.Bytes())
		}
	}
}

// wantCode fails unless err is a *plugin.Error with the given code.
func wantCode(t *testing.T, err error, code wire.Code) {
	t.Helper()
	var pe *plugin.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// codeOf returns the code of a host-side call error.
func codeOf(err error) (wire.Code, bool) { c := runtime.CodeOf(err); return c, c != "" }
