//go:build unix

package plugin_test

import "syscall"

// writeFD1 writes s straight to file descriptor 1, bypassing os.Stdout.
func writeFD1(s string) { syscall.Write(1, []byte(s)) }
