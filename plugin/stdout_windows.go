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
//
//   - The standard output handle of the process (SetStdHandle) and os.Stdout become an
//     inheritable duplicate of stderr (of the null device when there is no stderr), so
//     os.Stdout, fmt.Print and child processes that inherit their standard handles write
//     to stderr.
//
//   - The original handle is closed through os.Stdout, which owns it, so that nothing
//     holding the old os.Stdout can reach the pipe, and no child started with inherited
//     handles gets it (a handle the adapter inherited is itself inheritable).
//
//   - The freed handle value is at once taken again by another duplicate of stderr
//     (keepOccupied), held for the life of the process: Windows has no dup2, but it
//     hands a process's most recently freed value to its next new handle. So code that
//     copied the original value before this call (the C runtime's file descriptor 1 in
//     cgo code or a DLL, a captured GetStdHandle result) writes to stderr, and never to
//     an object Windows would otherwise give that value later. A writer that captured
//     the old os.Stdout itself gets os.ErrClosed (not stderr, as on POSIX).
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
		keepOccupied(orig)
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

// keepOccupied makes the just-closed handle value orig name a duplicate of stderr again
// (see occupy). Should another thread take the value first, it says so on stderr: C code
// still writing to its fd 1 could then reach that object.
func keepOccupied(orig windows.Handle) {
	if !occupy(orig, occupyTries, stderrDuplicate, func(h windows.Handle) { windows.CloseHandle(h) }) {
		fmt.Fprintln(os.Stderr, "plugin: the old standard output handle value could not be kept occupied; C code writing to its standard output may reach another object")
	}
}
