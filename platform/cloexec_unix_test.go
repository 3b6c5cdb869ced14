//go:build unix

package platform

import "testing"

// The scan every start makes of the host's descriptors, part of each start's work
// before the fork. The first scan marks what the test process inherited; the measured
// ones find nothing to change, as in a host that has started an adapter before.
func BenchmarkMarkInheritedCloexec(b *testing.B) {
	markInheritedCloexec()
	b.ReportAllocs()
	for b.Loop() {
		if fds := markInheritedCloexec(); len(fds) > 0 {
			b.Fatalf("descriptors %v lost close-on-exec between two scans", fds)
		}
	}
}
