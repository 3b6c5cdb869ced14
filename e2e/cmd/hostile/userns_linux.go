package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newUserNamespace clones a child into a user namespace of its own (clone, not
// unshare, which the filter always refused) and has it report, by its exit status,
// whether it holds CAP_SYS_ADMIN there. The child makes raw system calls only: it is a
// copy of this Go process without its threads.
func newUserNamespace() (string, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return "", fmt.Errorf("clone(CLONE_NEWUSER): %w", errno)
	}
	if pid == 0 {
		_, _, e := unix.RawSyscall(unix.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
		code := uintptr(1)
		if e == 0 && data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0 {
			code = 0
		}
		for {
			_, _, _ = unix.RawSyscall(unix.SYS_EXIT_GROUP, code, 0, 0)
		}
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(int(pid), &ws, 0, nil); err != nil {
		return "", err
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return "", fmt.Errorf("the child in a new user namespace: %v, no CAP_SYS_ADMIN there", ws)
	}
	return "a child in a user namespace of its own, with CAP_SYS_ADMIN there", nil
}

// cloneParent clones a child of the adapter's own parent (CLONE_PARENT): a sibling of
// the adapter, not its descendant, which leaves the adapter's process group with setsid
// and lives on for two seconds (raw system calls only, as in newUserNamespace). The
// init of a PID namespace may not (EINVAL): there a first child makes the call, and the
// second child is the adapter's.
func cloneParent() (string, error) {
	ts := unix.Timespec{Sec: 2}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_PARENT|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if pid == 0 && errno == 0 {
		_, _, _ = unix.RawSyscall(unix.SYS_SETSID, 0, 0, 0)
		_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		for {
			_, _, _ = unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
	}
	if errno == unix.EINVAL && unix.Getpid() == 1 {
		first, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			return "", e
		}
		if first == 0 {
			second, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_PARENT|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
			if second == 0 && e == 0 {
				_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
			}
			for {
				_, _, _ = unix.RawSyscall(unix.SYS_EXIT_GROUP, uintptr(e), 0, 0)
			}
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(int(first), &ws, 0, nil); err != nil {
			return "", err
		}
		if ws.ExitStatus() != 0 {
			return "", fmt.Errorf("clone(CLONE_PARENT): %w", unix.Errno(ws.ExitStatus()))
		}
		return "a child of this PID namespace's init, from its grandchild", nil
	}
	if errno != 0 {
		return "", fmt.Errorf("clone(CLONE_PARENT): %w", errno)
	}
	return fmt.Sprintf("pid %d, a child of the host in a session of its own", pid), nil
}
