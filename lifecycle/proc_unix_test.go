//go:build unix

package lifecycle_test

import (
	"os"
	"strconv"
	"syscall"
)

// hostPid is the calling process's pid as the host sees it: an adapter may be in its
// own PID namespace, where getpid says 1, while /proc is the host's.
func hostPid() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return os.Getpid()
}

// detachAttr puts a grandchild in a session (and process group) of its own.
func detachAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
