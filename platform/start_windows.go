package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/windows"
)

// procThreadAttributeJobList is PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows 10+):
// ProcThreadAttributeValue(13, FALSE, TRUE, FALSE). x/sys/windows does not name it.
const procThreadAttributeJobList = 0x0002000D

// jobBasicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which x/sys/windows lacks.
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

// jobProcessIDList is JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 64 ids.
type jobProcessIDList struct {
	NumberOfAssignedProcesses uint32
	NumberOfProcessIdsInList  uint32
	ProcessIDList             [64]uintptr
}

// osTree is the Windows supervision state: a job object with kill-on-close.
type osTree struct {
	mu     sync.Mutex
	job    windows.Handle // closed by release; kill-on-close ends whatever is left
	closed bool
}

func checkExeName(path string) error { return checkWindowsExeName(path) }

// checkExecutable: Windows has no execute bit; the .exe rule and CreateProcess decide.
func checkExecutable(os.FileInfo) error { return nil }

func (*osTree) cgroupPath() string { return "" }

func osReaped(*Tree) {}

func osStart(ctx context.Context, cfg *Config, dir string, files *stdio, t *Tree) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	job, err := newJob(cfg.Resources)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	pid, inJob, err := createInJob(cfg, dir, files, job)
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	// The process handle from CreateProcess is kept open until FindProcess has its own,
	// so the pid cannot have been reused in between.
	proc, err := os.FindProcess(int(pid))
	windows.CloseHandle(inJob)
	if err != nil {
		_ = windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
		return err
	}
	t.proc, t.pid, t.mech = proc, int(pid), MechJobObject
	t.sys = &osTree{job: job}
	return nil
}

// newJob creates an unnamed, non-inheritable job that kills its processes when its last
// handle closes (so a host that dies takes its adapters with it) and forbids breakaway.
func newJob(res Resources) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if res.MemoryBytes > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
		info.JobMemoryLimit = uintptr(res.MemoryBytes)
	}
	if res.MaxProcesses > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = uint32(res.MaxProcesses)
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// createInJob starts the adapter so that it runs no code of its own outside the job:
// created suspended, in the job from creation where PROC_THREAD_ATTRIBUTE_JOB_LIST is
// known (Windows 10+), else assigned before its main thread is resumed. Only the three
// standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST). It returns the pid
// and the process handle, which the caller closes.
func createInJob(cfg *Config, dir string, files *stdio, job windows.Handle) (uint32, windows.Handle, error) {
	app, err := windows.UTF16PtrFromString(cfg.Path)
	if err != nil {
		return 0, 0, err
	}
	cmdline, err := windows.UTF16PtrFromString(windows.ComposeCommandLine(append([]string{cfg.Path}, cfg.Args...)))
	if err != nil {
		return 0, 0, err
	}
	wdir, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	env, err := envBlock(cfg.env())
	if err != nil {
		return 0, 0, err
	}

	// Inheritable duplicates of the child's ends, under ForkLock so that no other
	// CreateProcess of this process inherits them by accident.
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	self := windows.CurrentProcess()
	var std [3]windows.Handle
	for i, f := range files.child {
		if err := windows.DuplicateHandle(self, windows.Handle(f.Fd()), self, &std[i], 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			closeHandles(std[:i])
			return 0, 0, err
		}
	}
	defer closeHandles(std[:])

	attrs, err := windows.NewProcThreadAttributeList(2)
	if err != nil {
		return 0, 0, err
	}
	defer attrs.Delete()
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&std[0]), uintptr(len(std))*unsafe.Sizeof(std[0])); err != nil {
		return 0, 0, err
	}
	jobs := [1]windows.Handle{job}
	inJob := attrs.Update(procThreadAttributeJobList, unsafe.Pointer(&jobs[0]), unsafe.Sizeof(jobs[0])) == nil

	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT |
		windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_NO_WINDOW)
	var pi windows.ProcessInformation
	if err := windows.CreateProcess(app, cmdline, nil, nil, true, flags, env, wdir, &si.StartupInfo, &pi); err != nil {
		return 0, 0, err
	}
	defer windows.CloseHandle(pi.Thread)
	fail := func(err error) (uint32, windows.Handle, error) {
		_ = windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return 0, 0, err
	}
	if !inJob {
		if err := windows.AssignProcessToJobObject(job, pi.Process); err != nil {
			return fail(fmt.Errorf("assigning to the job object: %w", err))
		}
	}
	if _, err := windows.ResumeThread(pi.Thread); err != nil {
		return fail(fmt.Errorf("resuming the main thread: %w", err))
	}
	return pi.ProcessId, pi.Process, nil
}

func closeHandles(hs []windows.Handle) {
	for _, h := range hs {
		if h != 0 {
			windows.CloseHandle(h)
		}
	}
}

// envBlock builds a CREATE_UNICODE_ENVIRONMENT block. An empty env gives an empty block
// (two NULs), never nil: nil would make the adapter inherit the host's environment.
func envBlock(env []string) (*uint16, error) {
	var block []uint16
	for _, kv := range env {
		u, err := windows.UTF16FromString(kv) // refuses NUL inside, adds the terminator
		if err != nil {
			return nil, err
		}
		block = append(block, u...)
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	block = append(block, 0)
	return &block[0], nil
}

func (s *osTree) handle() (windows.Handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.job, nil
}

func (s *osTree) kill(_ context.Context, t *Tree) error {
	job, err := s.handle()
	if err != nil {
		return err
	}
	return windows.TerminateJobObject(job, 1)
}

func (s *osTree) accounting(job windows.Handle) (jobBasicAccounting, error) {
	var info jobBasicAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return info, err
}

func (s *osTree) survivors(job windows.Handle) []int {
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

// verify polls ActiveProcesses with backoff until it is 0 and the direct child is reaped.
// ActiveProcesses drops only when a terminated process has released all its resources.
func (s *osTree) verify(ctx context.Context, t *Tree) error {
	job, err := s.handle()
	if err != nil {
		return err
	}
	backoff := time.Millisecond
	for {
		info, err := s.accounting(job)
		if err == nil && info.ActiveProcesses == 0 && t.ExitState() != nil {
			return nil
		}
		if ctx.Err() != nil {
			reason := fmt.Sprintf("job still has %d active processes: %v", info.ActiveProcesses, context.Cause(ctx))
			if err != nil {
				reason = "job accounting cannot be queried: " + err.Error()
			}
			return &UnverifiedError{Mechanism: t.mech, Pids: s.survivors(job), Reason: reason}
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

// osSweep has nothing to do on Windows: a job's last handle closes when its host dies,
// and kill-on-close ends the tree then.
func osSweep(context.Context, hclog.Logger) (SweepReport, error) { return SweepReport{}, nil }
