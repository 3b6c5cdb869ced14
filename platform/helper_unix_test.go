//go:build unix

package platform

import "syscall"

func setsidAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
