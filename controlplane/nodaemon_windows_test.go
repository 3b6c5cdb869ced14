package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// The daemon's documented absence on Windows: AF_UNIX sockets exist there (Windows 10
// and later), but the daemon could not learn a client's user, so Serve refuses with
// errors.ErrUnsupported before it scans a directory or makes a socket, and leaves no
// file behind.
func TestNoDaemonOnWindows(t *testing.T) {
	dir := testkit.TempDir(t)
	sock := filepath.Join(dir, "adapterd.sock")
	err := Serve(context.Background(), ServerConfig{Socket: sock, Dirs: []string{dir}})
	if !errors.Is(err, errors.ErrUnsupported) || err != errNoDaemon {
		t.Fatalf("Serve on Windows = %v, want the documented errNoDaemon (errors.ErrUnsupported)", err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Serve left %s behind: %v", sock, err)
	}
}
