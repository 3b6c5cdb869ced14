//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

const isWindows = false

// setProcessGroup puts the command in a process group of its own, so that close can
// end what it started too (unless a descendant left the group, e.g. with setsid: the
// host's supervision of the adapter's tree still covers those).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killCommand kills the command's process group and the command itself. It is only
// called while the command has not been reaped, so its process group id still names
// its group.
func killCommand(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
