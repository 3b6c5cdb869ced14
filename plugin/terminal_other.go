//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package plugin

// terminalFD cannot tell a terminal on this platform; Main then relies on recognising
// text on stdin.
func terminalFD(uintptr) bool { return false }
