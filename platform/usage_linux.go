package platform

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// usage reads the tree's cgroups, falling back to its processes in /proc.
func (s *osTree) usage(t *Tree) Usage {
	var u Usage
	if s.cg != nil {
		u.MemoryBytes, u.HasMemory = readInt64(s.cg.file("memory.current"))
		u.MemoryPeakBytes, u.HasPeak = readInt64(s.cg.file("memory.peak"))
		if b, err := os.ReadFile(s.cg.file("cpu.stat")); err == nil {
			if us, ok := keyedValue(b, "usage_usec"); ok {
				u.CPU, u.HasCPU = time.Duration(us)*time.Microsecond, true
			}
		}
	}
	if !u.HasMemory && s.v1 != nil && s.v1.mem != nil && s.v1.inside {
		u.MemoryBytes, u.HasMemory = readInt64(s.v1.mem.file("memory.usage_in_bytes"))
		u.MemoryPeakBytes, u.HasPeak = readInt64(s.v1.mem.file("memory.max_usage_in_bytes"))
	}
	if u.HasMemory && u.HasCPU && u.HasPeak {
		return u
	}
	var pids []int
	switch {
	case s.cg != nil:
		pids = s.cg.pids()
	default:
		if found, err := s.scan(t); err == nil {
			pids = pidsOf(found)
		}
	}
	var rss int64
	var cpu time.Duration
	seen := false
	page := int64(os.Getpagesize())
	for _, pid := range pids {
		p := strconv.Itoa(pid)
		statm, err1 := os.ReadFile("/proc/" + p + "/statm")
		stat, err2 := os.ReadFile("/proc/" + p + "/stat")
		if err1 != nil || err2 != nil {
			continue // gone meanwhile
		}
		if f := bytes.Fields(statm); len(f) > 1 {
			if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				rss += n * page
			}
		}
		cpu += statCPU(stat, pid == t.pid)
		seen = true
	}
	if !seen {
		return u
	}
	if !u.HasMemory {
		u.MemoryBytes, u.HasMemory = rss, true
		if !u.HasPeak {
			peak := t.peakSeen.Load()
			for rss > peak && !t.peakSeen.CompareAndSwap(peak, rss) {
				peak = t.peakSeen.Load()
			}
			u.MemoryPeakBytes, u.HasPeak = max(peak, rss), true
		}
	}
	if !u.HasCPU {
		u.CPU, u.HasCPU = cpu, true
	}
	return u
}

// statCPU returns the user and system time of a /proc/<pid>/stat line, with those of
// the children it reaped when withChildren.
func statCPU(b []byte, withChildren bool) time.Duration {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 || end+2 >= len(b) {
		return 0
	}
	f := bytes.Fields(b[end+2:]) // f[0] is field 3; utime is field 14
	if len(f) < 15 {
		return 0
	}
	last := 12
	if withChildren {
		last = 14
	}
	var ticks int64
	for i := 11; i <= last; i++ {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick
}

func readInt64(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return n, err == nil
}
