package platform

import (
	"context"
	"os"
	"strconv"
	"syscall"
)

// openExe opens the executable for hashing: read-only, close-on-exec, and without
// blocking should it have become a FIFO since it was checked.
func openExe(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// childExecFD is the descriptor number a pinned script is passed as.
const childExecFD = 3

// prepare makes the start execute a sealed copy of the hashed bytes (sealedCopy):
// execve of /proc/self/fd/N runs what that descriptor holds.
//
// A native executable is executed through the copy's close-on-exec descriptor, so the
// adapter inherits nothing. A script (#!) is different: the kernel hands its path,
// /proc/self/fd/3, to the interpreter, which opens it after the exec, so the descriptor
// must survive it: it is passed as the adapter's fd 3, and the interpreter and the script
// see that descriptor open (read-only use, on the sealed copy) and /proc/self/fd/3 as
// the script's path (argv[0] of the script, e.g. Python's sys.argv[0]). The interpreter
// reads the sealed copy, never the file, so a rewrite of the file in place cannot
// reach it.
func (p *pinned) prepare(ctx context.Context, sum string) error {
	m, err := sealedCopy(ctx, p.f, sum)
	if err != nil {
		return err
	}
	p.extra = m
	p.sealed = true
	var magic [2]byte
	if n, _ := m.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{'#', '!'} {
		p.child = m
		p.exec = "/proc/self/fd/" + strconv.Itoa(childExecFD)
		return nil
	}
	p.exec = "/proc/self/fd/" + strconv.Itoa(int(m.Fd()))
	if _, err := os.Stat(p.exec); err != nil {
		// Without /proc the descriptor cannot be executed (no execveat in os.StartProcess):
		// refuse rather than run a path that may no longer be the hashed file.
		return err
	}
	return nil
}

// execPath returns the path os.StartProcess executes for cfg, adding the pinned script's
// descriptor to attr's files; see prepare.
func execPath(cfg *Config, attr *os.ProcAttr) string {
	if cfg.pin == nil {
		return cfg.Path
	}
	if cfg.pin.child != nil && len(attr.Files) == childExecFD {
		attr.Files = append(attr.Files, cfg.pin.child)
	}
	return cfg.pin.exec
}
