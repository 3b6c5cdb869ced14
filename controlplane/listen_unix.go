//go:build unix

package controlplane

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// socketListener removes its socket file when closed, if the file is still the one
// it created.
type socketListener struct {
	*net.UnixListener
	path string
	fi   os.FileInfo
}

func (l *socketListener) Close() error {
	err := l.UnixListener.Close()
	if fi, serr := os.Lstat(l.path); serr == nil && os.SameFile(fi, l.fi) {
		_ = os.Remove(l.path)
	}
	return err
}

// listen creates the daemon's socket at path with owner-only permissions, without
// a moment in which another user could connect: the socket is bound inside a new
// directory only the owner can enter (mode 0700), made 0600, and then renamed into
// place, which also atomically replaces a stale socket. The process umask is not
// touched (it is process-wide). A live daemon's socket is never replaced, nor is a
// file that is not a socket.
func listen(path string) (net.Listener, error) {
	// The socket is bound under a temporary name, so bind would not notice a final
	// path too long for a socket address: the daemon would serve a socket nobody can
	// dial.
	if len(path) >= len(syscall.RawSockaddrUnix{}.Path) {
		return nil, fmt.Errorf("%w: %s: %d bytes, longer than a Unix socket address allows: %w",
			ErrSocket, path, len(path), syscall.ENAMETOOLONG)
	}
	if err := checkStale(path); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".cp")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		_ = ln.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &socketListener{UnixListener: ln, path: path, fi: fi}, nil
}

// checkStale returns nil when path is free or holds a socket nobody answers on.
func checkStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%w: %s exists and is not a socket", ErrConfig, path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist) {
		return nil // stale: replaced by the rename
	}
	return fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
}
