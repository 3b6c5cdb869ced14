//go:build !linux && !windows

package testkit

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Running reports whether pid names a live process, by signal 0; it is meaningful on
// Unix only (adapterkit's process tests run on Linux).
func Running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}

// Children is only implemented on Linux; elsewhere it finds none.
func Children(int) []int { return nil }

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
