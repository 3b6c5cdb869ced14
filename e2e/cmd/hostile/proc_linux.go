package main

import (
	"runtime"

	"golang.org/x/sys/unix"
)

func signal0(pid int) error { return unix.Kill(pid, 0) }

// ptraceAttach attaches to pid, waits for it to stop, and detaches.
func ptraceAttach(pid int) error {
	runtime.LockOSThread() // ptrace requests must come from the attaching thread
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return err
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		return err
	}
	return unix.PtraceDetach(pid)
}
