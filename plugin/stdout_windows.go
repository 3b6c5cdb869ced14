//go:build windows

package plugin

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

var (
	stdoutOnce   sync.Once
	stdoutFrames *os.File
	stdoutErr    error
)

// protectStdout moves the process's stdout out of everyone's reach and returns it. It
// acts once per process; later calls return the same file.
//
//   - The original standard output handle is duplicated, not inheritable, for frames.
//   - The standard output handle of the process (SetStdHandle) and os.Stdout become an
//     inheritable duplicate of stderr (of the null device when there is no stderr), so
//     os.Stdout, fmt.Print and child processes that inherit their standard handles write
//     to stderr.
//   - The original handle is closed through os.Stdout, which owns it, so that nothing
//     holding the old os.Stdout can reach the pipe, and no child started with inherited
//     handles gets it (a handle the adapter inherited is itself inheritable).
//
// Windows has no dup2: a handle value cannot be made to name another object. So what
// copied the original handle value before this call keeps that value, now closed: a
// writer that captured the old os.Stdout gets os.ErrClosed (not stderr, as on POSIX),
// and the C runtime of cgo code keeps its file descriptor 1 on the closed value, where
// its writes fail, or reach whatever object Windows later gives that value. C code that
// prints must redirect its own stdout (for example _dup2 of fd 2 onto fd 1).
func protectStdout() (*os.File, error) {
	stdoutOnce.Do(func() {
		stdoutFrames, stdoutErr = protect()
	})
	return stdoutFrames, stdoutErr
}

func protect() (*os.File, error) {
	self := windows.CurrentProcess()
	orig, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil || orig == 0 {
		return nil, fmt.Errorf("plugin: protecting stdout: no standard output handle: %v", err)
	}
	var frames windows.Handle
	if err := windows.DuplicateHandle(self, orig, self, &frames, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, fmt.Errorf("plugin: protecting stdout: duplicating the handle: %w", err)
	}
	repl, err := stderrDuplicate()
	if err != nil {
		windows.CloseHandle(frames)
		return nil, err
	}
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, repl); err != nil {
		windows.CloseHandle(frames)
		windows.CloseHandle(repl)
		return nil, fmt.Errorf("plugin: protecting stdout: redirecting standard output: %w", err)
	}
	old := os.Stdout
	os.Stdout = os.NewFile(uintptr(repl), "/dev/stdout")
	syscall.Stdout = syscall.Handle(repl)
	if old != nil && old.Fd() == uintptr(orig) {
		old.Close()
	} else {
		// os.Stdout had been replaced: whoever holds the original handle owns it. It must
		// at least not reach children.
		_ = windows.SetHandleInformation(orig, windows.HANDLE_FLAG_INHERIT, 0)
	}
	return os.NewFile(uintptr(frames), "adapter-protocol-stdout"), nil
}

// stderrDuplicate returns an inheritable duplicate of the standard error handle, or of
// the null device when there is none.
func stderrDuplicate() (windows.Handle, error) {
	self := windows.CurrentProcess()
	src, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err != nil || src == 0 {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return 0, fmt.Errorf("plugin: protecting stdout: opening %s: %w", os.DevNull, err)
		}
		defer null.Close()
		src = windows.Handle(null.Fd())
	}
	var h windows.Handle
	if err := windows.DuplicateHandle(self, src, self, &h, 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return 0, fmt.Errorf("plugin: protecting stdout: duplicating stderr: %w", err)
	}
	return h, nil
}
