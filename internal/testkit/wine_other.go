//go:build !windows

package testkit

// Wine is false off Windows: Wine runs Windows binaries only.
func Wine() bool { return false }
