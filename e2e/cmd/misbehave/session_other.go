//go:build !unix

package main

import "syscall"

// newSessionAttr has nothing to add where there are no POSIX sessions: the daemon is
// an ordinary child.
func newSessionAttr() *syscall.SysProcAttr { return nil }
