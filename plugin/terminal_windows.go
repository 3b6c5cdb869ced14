//go:build windows

package plugin

import "golang.org/x/sys/windows"

// terminalFD reports whether fd is a console handle.
func terminalFD(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}
