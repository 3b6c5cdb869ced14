package platform

import (
	"context"
	"os"

	"golang.org/x/sys/windows"
)

// openExe opens the executable for hashing with read sharing only: until the handle is
// closed (after CreateProcess returned), nobody can open the file for writing, delete
// it or rename it (each needs write or delete sharing), so the file CreateProcess maps
// is the one that was hashed. CreateProcess itself only reads and executes, which read
// sharing allows.
func openExe(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ, nil,
		windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// prepare: the file is executed by its path, held unchangeable by openExe's handle.
func (p *pinned) prepare(context.Context, string) error { return nil }
