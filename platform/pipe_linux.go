package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the kernel buffer asked for a protocol pipe: Linux's default
// /proc/sys/fs/pipe-max-size, so an unprivileged host gets it too. A 1 MiB payload then
// crosses in about one write instead of sixteen 64 KiB rounds of the reader waking the
// writer; pages are only used while data is in the pipe.
const pipeSize = 1 << 20

// growPipe enlarges a protocol pipe's kernel buffer (F_SETPIPE_SZ). Failure only
// costs speed.
func growPipe(f *os.File) {
	if f == nil {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
}
