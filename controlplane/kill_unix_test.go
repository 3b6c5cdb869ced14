//go:build unix

package controlplane_test

import "syscall"

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
