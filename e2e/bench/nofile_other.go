//go:build !unix

package main

// raiseNoFile has nothing to raise where there is no RLIMIT_NOFILE (Windows has no
// such per-process limit on handles).
func raiseNoFile(uint64) error { return nil }
