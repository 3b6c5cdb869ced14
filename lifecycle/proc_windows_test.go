package lifecycle_test

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// hostPid is the calling process's pid (Windows has no PID namespaces).
func hostPid() int { return os.Getpid() }

// detachAttr starts a grandchild detached from the adapter's console and in a process
// group of its own, as close to setsid as Windows gets: the job holds it anyway.
func detachAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
}
