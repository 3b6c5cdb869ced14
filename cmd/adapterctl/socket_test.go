//go:build linux || darwin

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listenArg in argv[1] turns the test binary into a process that listens on the Unix
// socket argv[2], prints "listening", and closes every connection, until killed (a
// daemon impostor run as another user).
const listenArg = "adapterctl-test-listen"

func init() {
	if len(os.Args) > 2 && os.Args[1] == listenArg {
		ln, err := net.Listen("unix", os.Args[2])
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(0)
			}
			_ = c.Close()
		}
	}
}

// TestSocketOwnedByAnotherUser: a socket whose listening process runs as another
// user (nobody, started with setpriv) is refused before a request is sent, with
// "owned by uid N (NAME)" and what to do.
func TestSocketOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a listener as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	dir := shortDir(t)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "adapterctl.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ak.sock")
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", exe, listenArg, sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make([]byte, 64)
	_ = out.(*os.File).SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, _ := out.Read(line); !strings.HasPrefix(string(line[:n]), "listening") {
		t.Fatalf("listener as nobody said %q", line[:n])
	}

	want := fmt.Sprintf("owned by uid %d (nobody)", uid)
	for _, args := range [][]string{{"ping", "--socket", sock}, {"status", "--socket", sock},
		{"call", "--socket", sock, "echo", "example.echo.echo", "{}"}} {
		r := runCmd(t, "", args...)
		r.want(t, ExitBroken, nil, []string{want, "run this client as that user"})
	}
}

// TestDefaultSocket: serve and the client commands meet at
// $XDG_RUNTIME_DIR/adapterkit.sock when --socket is not given.
func TestDefaultSocket(t *testing.T) {
	dir := shortDir(t)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	d := startDaemon(t, filepath.Join(dir, "adapterkit.sock"), goodDir)
	if !strings.Contains(d.ready, filepath.Join(dir, "adapterkit.sock")) {
		t.Fatalf("ready line %q does not name the default socket", d.ready)
	}
	r := runCmd(t, "", "ping")
	r.want(t, ExitOK, []string{"adapterkit.sock"}, nil)
}

// TestEscapeWriter: terminal control characters from the daemon are printed
// escaped; text, newlines and tabs are not; a rune split across writes survives.
func TestEscapeWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"é ✓ 日本", "é ✓ 日本"},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`},
		{"a\rb\bc\x7f", `a\x0db\x08c\x7f`},
		{"\u009b31m", `\u009b31m`},
		{"\u202eevil", `\u202eevil`},
		{"bad\xffbyte", `bad\xffbyte`},
	} {
		var sb strings.Builder
		w := &escapeWriter{w: &sb}
		if n, err := w.Write([]byte(tc.in)); err != nil || n != len(tc.in) {
			t.Fatalf("Write(%q) = %d, %v", tc.in, n, err)
		}
		if sb.String() != tc.want {
			t.Errorf("escape(%q) = %q, want %q", tc.in, sb.String(), tc.want)
		}
	}
	var sb strings.Builder
	w := &escapeWriter{w: &sb}
	b := []byte("x✓y")
	_, _ = w.Write(b[:2]) // "x" and the first byte of ✓
	_, _ = w.Write(b[2:])
	if sb.String() != "x✓y" {
		t.Errorf("split rune: %q", sb.String())
	}
}

// TestClientOutputEscaped: the client commands print through the escaping writer
// (here, an error naming a socket path with an escape sequence in it).
func TestClientOutputEscaped(t *testing.T) {
	sock := filepath.Join(shortDir(t), "\x1b[31mred.sock")
	r := runCmd(t, "", "ping", "--socket", sock)
	if strings.ContainsRune(r.stderr, 0x1b) || !strings.Contains(r.stderr, `\x1b[31mred.sock`) {
		t.Errorf("stderr %q: want the escape sequence escaped", r.stderr)
	}
}
