package main

import "golang.org/x/sys/unix"

// inotify creates an inotify instance and closes it.
func inotify() error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	return err
}
