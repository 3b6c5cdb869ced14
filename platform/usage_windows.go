package platform

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// usage reads the job object's accounting: CPU time (user and kernel, in 100 ns units)
// of every process the job ever held, and its peak memory (committed bytes).
func (s *osTree) usage(*Tree) Usage {
	var u Usage
	_ = s.withJob(func(job windows.Handle) error {
		if acc, err := queryAccounting(job); err == nil {
			u.CPU, u.HasCPU = time.Duration(acc.TotalUserTime+acc.TotalKernelTime)*100, true
		}
		var ext windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		if err := windows.QueryInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&ext)), uint32(unsafe.Sizeof(ext)), nil); err == nil {
			u.MemoryPeakBytes, u.HasPeak = int64(ext.PeakJobMemoryUsed), true
		}
		return nil
	})
	return u
}
