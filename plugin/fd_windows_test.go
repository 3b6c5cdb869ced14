//go:build windows

package plugin_test

import "golang.org/x/sys/windows"

// stdoutAtStart is the standard output handle value as the process started, captured
// before plugin.Main protects stdout, as the C runtime's fd 1 or a DLL would hold it.
var stdoutAtStart, _ = windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)

// writeFD1 writes s through the standard output handle value captured at start,
// bypassing os.Stdout and GetStdHandle: after the protection that value must name
// stderr, never the protocol pipe.
func writeFD1(s string) {
	var n uint32
	windows.WriteFile(stdoutAtStart, []byte(s), &n, nil)
}
