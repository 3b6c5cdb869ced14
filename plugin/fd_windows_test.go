//go:build windows

package plugin_test

import "golang.org/x/sys/windows"

// writeFD1 writes s straight to the process's standard output handle, bypassing os.Stdout.
func writeFD1(s string) {
	h, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil {
		return
	}
	var n uint32
	windows.WriteFile(h, []byte(s), &n, nil)
}
