package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the direct child pid has exited (it is then a zombie, not yet
// reaped), without holding an OS thread while it waits: the process's pidfd becomes
// readable when it exits, and the runtime's poller waits for that as for a pipe. A
// thread blocked in waitid costs its stacks (tens of KiB) for as long as the adapter
// runs, per adapter. It reports false, having waited for nothing, when a pidfd cannot
// be opened or polled (a kernel before 5.3, or a seccomp filter refusing it): the
// caller then waits in waitid.
func awaitExit(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return false
	}
	// Non-blocking, so os.NewFile registers it with the poller.
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, perr := unix.Poll(fds, 0)
			switch {
			case perr == unix.EINTR:
				continue
			case perr != nil:
				return true // cannot tell: exited stays false, waitid decides
			}
			exited = n > 0
			return exited
		}
	})
	return err == nil && exited
}
