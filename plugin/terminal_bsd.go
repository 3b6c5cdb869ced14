//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package plugin

import "golang.org/x/sys/unix"

// terminalFD reports whether fd is a terminal: it answers the terminal-attributes ioctl.
func terminalFD(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
