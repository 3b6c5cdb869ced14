//go:build !linux && !windows

package platform

// usage: the platform says nothing of a tree's resource use (on macOS a process
// group's accounting would miss the processes that left it).
func (*osTree) usage(*Tree) Usage { return Usage{} }
