package platform

import "time"

// Usage is the resource use of a whole process tree, as far as the platform can say;
// the Has fields tell which figures are known.
//
// Linux: from the tree's memory cgroup where one is used (cgroup v2 memory.current
// and memory.peak, or cgroup v1 memory.usage_in_bytes and memory.max_usage_in_bytes,
// used when Resources.MemoryBytes is set and v2 has no memory controller), else the
// sum of the resident set sizes of the tree's processes, with the peak being the
// largest sum seen by Usage; CPU time from the tree's cgroup v2 cpu.stat (processes
// that ended included), else the sum over its living processes and the children the
// adapter reaped. Windows: CPU time and peak memory from the job object's
// accounting (current memory is not known). Elsewhere nothing is known.
type Usage struct {
	// MemoryBytes is the tree's current memory use (resident memory; with a memory
	// cgroup, what the cgroup charges, page cache included).
	MemoryBytes int64
	// MemoryPeakBytes is the most memory the tree used at once.
	MemoryPeakBytes int64
	// CPU is the processor time (user and system) the tree used.
	CPU time.Duration

	HasMemory, HasPeak, HasCPU bool
}

// Usage reports the resource use of the tree while it runs; after Close it reports
// nothing.
func (t *Tree) Usage() Usage {
	if t.closed.Load() {
		return Usage{}
	}
	return t.sys.usage(t)
}
