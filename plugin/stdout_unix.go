//go:build unix

package plugin

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

var (
	stdoutOnce    sync.Once
	stdoutFrames  *os.File
	stdoutErr     error
	replacedFiles []*os.File // kept reachable: their finalizers would close fd 1
)

// protectStdout moves the process's stdout out of everyone's reach and returns it: the
// original descriptor 1 is duplicated to a private close-on-exec descriptor for frames,
// then stderr is duplicated onto descriptor 1, so anything written to fd 1 (os.Stdout,
// fmt.Print, a C library, a child process inheriting it) lands on stderr. It acts once
// per process; later calls return the same file.
func protectStdout() (*os.File, error) {
	stdoutOnce.Do(func() {
		fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			stdoutErr = fmt.Errorf("plugin: protecting stdout: duplicating fd 1: %w", err)
			return
		}
		if err := unix.Dup2(2, 1); err != nil {
			unix.Close(fd)
			stdoutErr = fmt.Errorf("plugin: protecting stdout: redirecting fd 1 to stderr: %w", err)
			return
		}
		replacedFiles = append(replacedFiles, os.Stdout)
		os.Stdout = os.NewFile(1, "/dev/stdout")
		stdoutFrames = os.NewFile(uintptr(fd), "adapter-protocol-stdout")
	})
	return stdoutFrames, stdoutErr
}
