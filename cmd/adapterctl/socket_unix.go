//go:build !windows

package main

import (
	"os"
	"syscall"
)

// ownedBySelf reports whether fi's owner is this process's user.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
