package platform

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/windows"
)

// jobBasicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (winnt.h), which
// x/sys/windows does not declare: four LARGE_INTEGERs then four DWORDs, 48 bytes on
// every architecture (the int64 fields are at 8-byte offsets, so Go's 4-byte alignment
// of int64 on 386 gives the same layout as C).
type jobBasicAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// jobProcessIDList is JOBOBJECT_BASIC_PROCESS_ID_LIST (winnt.h) with room for 64 ids:
// two DWORDs then ULONG_PTR ProcessIdList[], which starts at offset 8 on every
// architecture.
type jobProcessIDList struct {
	NumberOfAssignedProcesses uint32
	NumberOfProcessIdsInList  uint32
	ProcessIDList             [64]uintptr
}

// Compile-time layout checks against the sizes winnt.h gives, for every GOARCH this file
// is built for: a mismatch makes one of these constants negative, which does not compile.
const (
	ptrSize = unsafe.Sizeof(uintptr(0))
	// JOBOBJECT_BASIC_ACCOUNTING_INFORMATION: 48 bytes everywhere.
	_ = uint8(unsafe.Sizeof(jobBasicAccounting{}) - 48)
	_ = uint8(48 - unsafe.Sizeof(jobBasicAccounting{}))
	_ = uint8(unsafe.Offsetof(jobBasicAccounting{}.ActiveProcesses) - 40)
	_ = uint8(40 - unsafe.Offsetof(jobBasicAccounting{}.ActiveProcesses))
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: the id array at offset 8.
	_ = uint8(unsafe.Offsetof(jobProcessIDList{}.ProcessIDList) - 8)
	_ = uint8(8 - unsafe.Offsetof(jobProcessIDList{}.ProcessIDList))
	// JOBOBJECT_EXTENDED_LIMIT_INFORMATION as x/sys/windows declares it: the basic part
	// (two LARGE_INTEGERs, DWORD, 2 SIZE_T, DWORD, ULONG_PTR, 2 DWORDs, padded to 8:
	// 64 bytes on 64-bit, 48 on 32-bit), IO_COUNTERS (48), then four SIZE_T; 144 and 112
	// bytes in all. JobMemoryLimit is the second SIZE_T.
	basicLimitSize = 32 + 4*ptrSize
	extLimitSize   = basicLimitSize + 48 + 4*ptrSize
	jobMemOff      = basicLimitSize + 48 + ptrSize
	_              = uint8(unsafe.Sizeof(windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{}) - basicLimitSize)
	_              = uint8(basicLimitSize - unsafe.Sizeof(windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{}))
	_              = uint8(unsafe.Sizeof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}) - extLimitSize)
	_              = uint8(extLimitSize - unsafe.Sizeof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}))
	_              = uint8(unsafe.Offsetof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}.JobMemoryLimit) - jobMemOff)
	_              = uint8(jobMemOff - unsafe.Offsetof(windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}.JobMemoryLimit))
)

// osTree is the Windows supervision state: a job object with kill-on-close.
type osTree struct {
	mu     sync.Mutex
	job    windows.Handle // closed by release; kill-on-close ends whatever is left
	closed bool
}

func (*osTree) cgroupPath() string { return "" }

func osReaped(*Tree) {}

// jobLimits turns Resources into job limit flags and values. A memory limit that SIZE_T
// cannot hold (above 4 GiB on a 32-bit host) is not applied and is named in the returned
// *LimitError; a process limit above what a DWORD holds is capped there, which no tree
// can reach anyway.
func jobLimits(res Resources) (info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION, notApplied *LimitError) {
	// No BREAKAWAY_OK nor SILENT_BREAKAWAY_OK: nothing started in the job can leave it.
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if res.MemoryBytes > 0 {
		if uint64(res.MemoryBytes) > uint64(^uintptr(0)) {
			notApplied = &LimitError{Limits: []string{"memory"},
				Reason: fmt.Sprintf("%d bytes exceed what a job memory limit holds on this %d-bit host", res.MemoryBytes, 8*ptrSize)}
		} else {
			// JobMemoryLimit caps the committed memory of all the job's processes together.
			info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
			info.JobMemoryLimit = uintptr(res.MemoryBytes)
		}
	}
	if res.MaxProcesses > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = uint32(min(uint64(res.MaxProcesses), math.MaxUint32))
	}
	return info, notApplied
}

// newJob creates an unnamed job whose handle is not inheritable (nil security
// attributes), that kills its processes when its last handle closes (so a host that dies
// takes its adapters with it) and forbids breakaway.
func newJob(info *windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(info)), uint32(unsafe.Sizeof(*info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// withJob runs f with the job handle while holding the lock, so that release cannot
// close the handle (and Windows reuse its value for another object) during the call.
func (s *osTree) withJob(f func(windows.Handle) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return f(s.job)
}

func (s *osTree) kill(_ context.Context, _ *Tree) error {
	return s.withJob(func(job windows.Handle) error {
		if err := windows.TerminateJobObject(job, 1); err != nil {
			return fmt.Errorf("terminating the job object: %w", err)
		}
		return nil
	})
}

func queryAccounting(job windows.Handle) (jobBasicAccounting, error) {
	var info jobBasicAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return info, err
}

// querySurvivors lists up to 64 process ids still in the job (for error reports only).
func querySurvivors(job windows.Handle) []int {
	var list jobProcessIDList
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil)
	if err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
		return nil
	}
	n := min(int(list.NumberOfProcessIdsInList), len(list.ProcessIDList))
	out := make([]int, n)
	for i := range n {
		out[i] = int(list.ProcessIDList[i])
	}
	return out
}

// verify polls ActiveProcesses (JobObjectBasicAccountingInformation) with backoff until
// it is 0 and the direct child is reaped. That count is the proof: it drops when a
// process of the job has terminated, whoever still holds a handle to it.
func (s *osTree) verify(ctx context.Context, t *Tree) error {
	backoff := time.Millisecond
	for {
		var info jobBasicAccounting
		var qerr error
		if err := s.withJob(func(job windows.Handle) error {
			info, qerr = queryAccounting(job)
			return nil
		}); err != nil {
			return err
		}
		if qerr == nil && info.ActiveProcesses == 0 && t.ExitState() != nil {
			return nil
		}
		if ctx.Err() != nil {
			reason := fmt.Sprintf("job still has %d active processes: %v", info.ActiveProcesses, context.Cause(ctx))
			if qerr != nil {
				reason = "job accounting cannot be queried: " + qerr.Error()
			}
			var pids []int
			_ = s.withJob(func(job windows.Handle) error { pids = querySurvivors(job); return nil })
			return &UnverifiedError{Mechanism: t.mech, Pids: pids, Reason: reason}
		}
		sleepUntil(ctx, time.Now().Add(backoff))
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

// release closes the job handle; with kill-on-close that also ends anything left.
func (s *osTree) release(*Tree) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return windows.CloseHandle(s.job)
}

// osSweep has nothing to do on Windows: a job's last handle closes when its host dies
// (the handle is never inherited nor duplicated elsewhere), and kill-on-close ends the
// tree then.
func osSweep(context.Context, hclog.Logger) (SweepReport, error) { return SweepReport{}, nil }
