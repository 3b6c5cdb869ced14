//go:build !linux && !windows

package platform

import (
	"context"
	"os"
	"syscall"
)

// openExe opens the executable for hashing, without blocking should it have become a
// FIFO since it was checked.
func openExe(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// prepare: this system offers no way to execute an open descriptor from
// os.StartProcess (macOS has no fexecve or execveat, and no sealed memory files), so
// the hashed file is executed by its path. The pin is checked at every start, and a
// file written in place between the hash and the exec is caught after the exec by its
// size and modification time (the tree is then killed), but a file renamed over the
// path in that window would run, and so would a same-size rewrite whose owner resets
// the modification time, or a rewrite of a script while its interpreter reads it: there,
// keep the file and its directory from untrusted writers.
func (p *pinned) prepare(context.Context, string) error { return nil }
