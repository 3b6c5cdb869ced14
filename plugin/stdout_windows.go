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

// protectStdout moves the process's stdout out of everyone's reach and returns it: the
// original standard output handle is duplicated (not inheritable) for frames, the
// standard output handle of the process becomes a duplicate of stderr (so os.Stdout,
// fmt.Print and child processes write to stderr), and the original handle is closed so
// that nothing holding the old os.Stdout can reach the pipe. It acts once per process.
func protectStdout() (*os.File, error) {
	stdoutOnce.Do(func() {
		stdoutFrames, stdoutErr = protect()
	})
	return stdoutFrames, stdoutErr
}

func protect() (*os.File, error) {
	self := windows.CurrentProcess()
	orig, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil || orig == 0 || orig == windows.InvalidHandle {
		return nil, fmt.Errorf("plugin: protecting stdout: no standard output handle: %v", err)
	}
	var frames windows.Handle
	if err := windows.DuplicateHandle(self, orig, self, &frames, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, fmt.Errorf("plugin: protecting stdout: duplicating the handle: %w", err)
	}
	target, err := stderrHandle()
	if err != nil {
		windows.CloseHandle(frames)
		return nil, err
	}
	var repl windows.Handle
	if err := windows.DuplicateHandle(self, target, self, &repl, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		windows.CloseHandle(frames)
		return nil, fmt.Errorf("plugin: protecting stdout: duplicating stderr: %w", err)
	}
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, repl); err != nil {
		windows.CloseHandle(frames)
		windows.CloseHandle(repl)
		return nil, fmt.Errorf("plugin: protecting stdout: redirecting standard output: %w", err)
	}
	old := os.Stdout
	os.Stdout = os.NewFile(uintptr(repl), "/dev/stdout")
	syscall.Stdout = syscall.Handle(repl)
	if old != nil {
		old.Close()
	}
	return os.NewFile(uintptr(frames), "adapter-protocol-stdout"), nil
}

// stderrHandle returns the standard error handle, or the null device when there is none.
func stderrHandle() (windows.Handle, error) {
	h, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err == nil && h != 0 && h != windows.InvalidHandle {
		return h, nil
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("plugin: protecting stdout: opening %s: %w", os.DevNull, err)
	}
	// The null device stays open for the life of the process.
	nullFiles = append(nullFiles, null)
	return windows.Handle(null.Fd()), nil
}

var nullFiles []*os.File
