//go:build linux || darwin

package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// TestServeSocketIdleTimeout: serve --socket-idle-timeout closes a socket client that
// sends nothing for that long.
func TestServeSocketIdleTimeout(t *testing.T) {
	sock := filepath.Join(shortDir(t), "ctl.sock")
	startDaemon(t, sock, "--socket", sock, "--socket-idle-timeout", "200ms", goodDir)
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := nc.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); n != 0 || err == nil || ok && ne.Timeout() {
		t.Fatalf("idle client: read %d, %v; want it closed by the daemon", n, err)
	}
}
