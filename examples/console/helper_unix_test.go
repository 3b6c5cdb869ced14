//go:build unix

package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// holdLock takes an exclusive lock on path and keeps it for the life of the process:
// the kernel drops it only when the process has exited.
func holdLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	lockFiles = append(lockFiles, f)
	return unix.Flock(int(f.Fd()), unix.LOCK_EX)
}

var lockFiles []*os.File

// lockFree reports whether nobody holds the lock on path, i.e. the helper holding it
// has exited.
func lockFree(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}
