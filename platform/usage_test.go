package platform

import (
	"runtime"
	"testing"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// Usage reports the CPU and memory of a running tree where the platform can say, and
// nothing after Close.
func TestUsageOfRunningTree(t *testing.T) {
	tree := startHelper(t, Config{}, "block")
	u := tree.Usage()
	switch runtime.GOOS {
	case "linux":
		if !u.HasCPU || !u.HasMemory || !u.HasPeak || u.MemoryBytes <= 0 || u.MemoryPeakBytes < u.MemoryBytes {
			t.Errorf("Usage on Linux = %+v: want CPU and memory known, memory > 0", u)
		}
	case "windows":
		if !u.HasCPU || !u.HasPeak || u.HasMemory {
			t.Errorf("Usage on Windows = %+v: want CPU and peak memory from the job object", u)
		}
		if u.MemoryPeakBytes <= 0 && !testkit.WineGap(t, "the job's peak memory is above 0",
			"QueryInformationJobObject(JobObjectExtendedLimitInformation) returns zeros, PeakJobMemoryUsed too") {
			t.Errorf("Usage on Windows = %+v: want CPU and peak memory from the job object", u)
		}
	default:
		if u != (Usage{}) {
			t.Errorf("Usage on %s = %+v: nothing is known here", runtime.GOOS, u)
		}
	}
	shutdown(t, tree)
	if u := tree.Usage(); u != (Usage{}) {
		t.Errorf("Usage after Close = %+v", u)
	}
}
