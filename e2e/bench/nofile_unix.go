//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseNoFile makes sure this process may open want file descriptors, raising its
// soft limit (within the hard one) if needed.
func raiseNoFile(want uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= want {
		return nil
	}
	if lim.Max < want {
		return fmt.Errorf("regmem needs %d open files, the hard limit is %d (raise it, or lower -regmem-n)", want, lim.Max)
	}
	lim.Cur = want
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
