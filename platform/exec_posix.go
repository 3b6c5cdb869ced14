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

// requestedLimits names the limits r asks for, as LimitError reports them.
func requestedLimits(r Resources) []string {
	var out []string
	if r.MemoryBytes > 0 {
		out = append(out, "memory")
	}
	if r.MaxProcesses > 0 {
		out = append(out, "processes")
	}
	return out
}
