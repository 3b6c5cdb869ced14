//go:build !linux

package platform

// limitHit: only Linux tells why a tree was killed (its memory cgroup's kill counter).
func (*osTree) limitHit() error { return nil }
