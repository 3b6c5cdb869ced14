//go:build unix

package main

import "syscall"

// newSessionAttr makes a child call setsid: it leaves the adapter's session and
// process group, as a daemon does.
func newSessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
