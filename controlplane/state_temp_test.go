//go:build linux

package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStateTempLeftover: the temporary file of a record write the daemon was
// killed inside is removed when the next daemon starts; other files stay, and a
// daemon refused because the socket is in use removes nothing (the running daemon
// could be writing).
func TestStateTempLeftover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// What saveRefused leaves when killed between CreateTemp and Rename.
	leftover := func() string {
		f, err := os.CreateTemp(dir, tempPrefix+"*")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(`{"version":1,"refu`); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		return f.Name()
	}
	old := leftover()
	keep := []string{filepath.Join(dir, "notes"), filepath.Join(dir, ".refused.jsonx")}
	for _, k := range keep {
		if err := os.WriteFile(k, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	subdir := filepath.Join(dir, tempPrefix+"dir")
	if err := os.Mkdir(subdir, 0o700); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, subdir)

	sock, stop := serveUntil(t, ServerConfig{Dirs: []string{t.TempDir()}, StateDir: dir})
	if _, err := os.Lstat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover %s after a start: %v", old, err)
	}
	for _, k := range keep {
		if _, err := os.Lstat(k); err != nil {
			t.Errorf("%s removed: %v", k, err)
		}
	}
	under := leftover() // the running daemon's write under way
	err := Serve(context.Background(), ServerConfig{Socket: sock, Dirs: []string{t.TempDir()}, StateDir: dir})
	if !errors.Is(err, ErrSocketInUse) {
		t.Fatalf("second daemon: %v, want ErrSocketInUse", err)
	}
	if _, err := os.Lstat(under); err != nil {
		t.Errorf("a daemon refused the socket removed the running one's temporary file: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
