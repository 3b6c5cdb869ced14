//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownSession makes cmd start in a session of its own (setsid).
func ownSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
