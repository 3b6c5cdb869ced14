package platform

import (
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// A cgroup's control files are opened, read and written with plain system calls. An
// *os.File would set each one non-blocking and register it with Go's poller (kernfs
// files can be polled), then unregister it at its close: four or five system calls more
// per file, for files read or written once, on every close of a tree (cgroup.kill, then
// cgroup.events until the tree is empty) and every start that applies limits. Errors
// are *os.PathError, as the os package's.

// openControl opens a control file, which must exist (no O_CREAT), close-on-exec.
func openControl(path string, mode int) (int, error) {
	for {
		fd, err := unix.Open(path, mode|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// readControl returns the whole contents of a control file.
func readControl(path string) ([]byte, error) {
	fd, err := openControl(path, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// writeExisting writes a cgroup interface file, which must exist: a missing file means
// a missing controller or kernel feature (fs.ErrNotExist), never a file to create —
// creating one in a cgroup directory fails with a misleading permission error.
func writeExisting(path, value string) error {
	fd, err := openControl(path, unix.O_WRONLY)
	if err != nil {
		return err
	}
	b := []byte(value)
	for len(b) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, b)
		switch {
		case err == unix.EINTR:
			err = nil
		case err != nil:
			err = &os.PathError{Op: "write", Path: path, Err: err}
		default:
			b = b[n:]
		}
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: path, Err: cerr}
	}
	return err
}
