//go:build !linux && !windows

package platform

import (
	"os"
	"syscall"
)

// openExe opens the executable for hashing, without blocking should it have become a
// FIFO since it was checked.
func openExe(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// prepare: this system offers no way to execute an open descriptor from
// os.StartProcess (macOS has no fexecve or execveat), so the hashed file is executed by
// its path. The pin is checked at every start, but a file renamed over the path between
// the hash and the exec would run: there, protect the directory from untrusted writers.
func (p *pinned) prepare() error { return nil }
