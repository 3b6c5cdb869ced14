//go:build unix

package platform

import (
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// fdDir lists the calling process's open descriptors: Linux's procfs, else fdescfs.
func fdDir() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/fd"
	}
	return "/dev/fd"
}

// protectInheritedFds marks the host's inherited descriptors close-on-exec just before an
// adapter is started (see markInheritedCloexec), unless the host chose
// HostOptions.KeepInheritedFDs; it records (MarkedCloseOnExec) and logs at DEBUG which it changed.
func protectInheritedFds(cfg *Config) {
	if currentHostOptions().KeepInheritedFDs {
		return
	}
	if fds := markInheritedCloexec(); len(fds) > 0 {
		noteMarked(fds)
		cfg.logger().Debug("marked inherited descriptors close-on-exec so that they do not leak into adapters (process-wide; see platform.HostOptions.KeepInheritedFDs)", "fds", fds)
	}
}

// markInheritedCloexec sets close-on-exec on every descriptor >= 3 of the host that
// lacks it. Go opens all its descriptors close-on-exec, so such descriptors were
// inherited from the host's own parent (or opened by C code) and would otherwise leak
// into every adapter: fork+exec on Linux and macOS closes only descriptors marked
// FD_CLOEXEC. This is a process-wide change, made only while HostOptions.KeepInheritedFDs
// is false and reported by MarkedCloseOnExec; descriptors a host hands to its own
// children through exec.Cmd.ExtraFiles are duplicated there and are not affected.
// It returns the descriptors it changed.
func markInheritedCloexec() []int {
	// The descriptor list is read with plain system calls: an *os.File would set the
	// directory non-blocking, try to register it with the poller, stat it and set it
	// blocking again before the first read, work repeated on every start.
	d, err := unix.Open(fdDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(d)
	var (
		buf     [4096]byte
		names   []string
		changed []int
	)
	for {
		n, err := unix.ReadDirent(d, buf[:])
		if err != nil || n <= 0 {
			return changed
		}
		// ParseDirent with no maximum takes every entry the read returned.
		_, _, names = unix.ParseDirent(buf[:n], -1, names[:0])
		for _, name := range names {
			fd, err := strconv.Atoi(name)
			if err != nil || fd < 3 || fd == d {
				continue
			}
			flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil || flags&unix.FD_CLOEXEC != 0 {
				continue
			}
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
				changed = append(changed, fd)
			}
		}
	}
}
