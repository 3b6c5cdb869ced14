package testkit

import (
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Running reports whether pid names a process that has not terminated: one that can be
// opened and whose handle is not yet signaled. A terminated process some other process
// still holds a handle to is not running.
func Running(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false // no such process, or one this user may not open (tests own theirs)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// Children lists the running processes whose parent is pid, from a process snapshot
// (CreateToolhelp32Snapshot), leaving out the conhost.exe the system starts for a
// console program that has no console of its own. Windows keeps the creator's pid after the creator ends, so
// a child whose parent pid was reused could be listed too: tests ask only about their
// own live adapters.
func Children(pid int) []int {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	var out []int
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if int(e.ParentProcessID) == pid && int(e.ProcessID) != pid && Running(int(e.ProcessID)) &&
			!strings.EqualFold(windows.UTF16ToString(e.ExeFile[:]), "conhost.exe") {
			out = append(out, int(e.ProcessID))
		}
	}
	return out
}

// PrivateCgroup has nothing to make off Linux: it returns "".
func PrivateCgroup(testing.TB) string { return "" }

// InCgroup leaves cmd alone off Linux.
func InCgroup(testing.TB, *exec.Cmd, string) func() { return func() {} }

// Proc is a process: its pid and start time (Linux only; see proc_linux.go).
type Proc struct {
	Pid   int
	Start string
}

// Descendants needs /proc: off Linux it lists nothing.
func Descendants(int) []Proc { return nil }
