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
// directory only the owner can enter (mode 0700), made 0600, and then hard-linked
// into place, which fails if anything is there (so of daemons started at once on one
// path, one serves and the others are refused); a stale socket is removed first, if
// it is still the one found stale. The process umask is not touched (it is
// process-wide). A live daemon's socket is never replaced, nor is a file that is not
// a socket.
func listen(path string) (net.Listener, error) {
	// The socket is bound under a temporary name, so bind would not notice a final
	// path too long for a socket address: the daemon would serve a socket nobody can
	// dial.
	if len(path) >= len(syscall.RawSockaddrUnix{}.Path) {
		return nil, fmt.Errorf("%w: %s: %d bytes, longer than a Unix socket address allows: %w",
			ErrSocket, path, len(path), syscall.ENAMETOOLONG)
	}
	stale, err := checkStale(path)
	if err != nil {
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
	if stale != nil {
		if fi, err := os.Lstat(path); err == nil && os.SameFile(fi, stale) {
			_ = os.Remove(path)
		}
	}
	if err := os.Link(tmp, path); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return fail(err)
		}
		// Another daemon got there first (or a file appeared): say what is there.
		_ = ln.Close()
		if _, err := checkStale(path); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &socketListener{UnixListener: ln, path: path, fi: fi}, nil
}

// checkStale returns nil, nil when path is free, and the file's information when it
// holds a socket nobody answers on (stale).
func checkStale(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return nil, fmt.Errorf("%w: %s exists and is not a socket", ErrConfig, path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w: %s", ErrSocketInUse, path)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fi, nil // stale
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // gone meanwhile
	}
	return nil, fmt.Errorf("%w: %s: %w", ErrSocket, path, err)
}
