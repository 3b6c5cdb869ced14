//go:build linux

package plugin

import "golang.org/x/sys/unix"

// terminalFD reports whether fd is a terminal: it answers the terminal-attributes ioctl.
func terminalFD(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
