package platform

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openExe opens the executable for hashing: read-only, close-on-exec, and without
// blocking should it have become a FIFO since it was checked.
func openExe(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// childExecFD is the descriptor number a pinned script is passed as.
const childExecFD = 3

// prepare chooses how the hashed descriptor is executed: execve of /proc/self/fd/N runs
// the file that descriptor holds, whatever the path names by then.
//
// A native executable is executed through a close-on-exec duplicate numbered 10 or
// above (the numbers os.StartProcess moves descriptors to in the child are below), so
// the adapter inherits nothing. A script (#!) is different: the kernel hands its path,
// /proc/self/fd/3, to the interpreter, which opens it after the exec, so the descriptor
// must survive it: it is passed as the adapter's fd 3, and the interpreter and the script
// see that descriptor open (read-only, on the script) and /proc/self/fd/3 as the
// script's path (argv[0] of the script, e.g. Python's sys.argv[0]).
func (p *pinned) prepare() error {
	var magic [2]byte
	if n, _ := p.f.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{'#', '!'} {
		p.child = p.f
		p.exec = "/proc/self/fd/" + strconv.Itoa(childExecFD)
		return nil
	}
	fd, err := unix.FcntlInt(p.f.Fd(), unix.F_DUPFD_CLOEXEC, 10)
	if err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	p.extra = os.NewFile(uintptr(fd), p.f.Name())
	p.exec = "/proc/self/fd/" + strconv.Itoa(fd)
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
