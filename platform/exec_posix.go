//go:build !windows

package platform

import "os"

// checkExeName: POSIX has no extension rule; any regular executable file is a program.
func checkExeName(string) error { return nil }

// checkExecutable refuses a file nobody may execute.
func checkExecutable(fi os.FileInfo) error {
	if fi.Mode().Perm()&0o111 == 0 {
		return ErrNotExecutable
	}
	return nil
}
