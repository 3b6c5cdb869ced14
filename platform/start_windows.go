package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procThreadAttributeJobList is PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows 10+):
// ProcThreadAttributeValue(13, FALSE, TRUE, FALSE). x/sys/windows does not name it.
const procThreadAttributeJobList = 0x0002000D

func osStart(ctx context.Context, cfg *Config, dir string, files *stdio, t *Tree) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Everything the command line, environment and directory need is checked before a
	// job exists, so that bad input is an ErrInvalidConfig and not an ErrStart.
	argv, err := newLaunch(cfg, dir)
	if err != nil {
		return &LaunchError{Path: cfg.Path, Err: errors.Join(ErrInvalidConfig, err)}
	}
	std, err := childHandles(files)
	if err != nil {
		return &LaunchError{Path: cfg.Path, Err: errors.Join(ErrInvalidConfig, err)}
	}
	breakaway, err := hostNesting(t)
	if err != nil {
		return &LaunchError{Path: cfg.Path, Err: errors.Join(ErrStart, err)}
	}
	limits, notApplied := jobLimits(cfg.Resources)
	job, err := newJob(&limits)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	pid, process, err := createInJob(argv, std, job, breakaway)
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	// The process handle from CreateProcess is kept open until FindProcess has its own,
	// so the pid cannot have been reused in between.
	proc, err := os.FindProcess(int(pid))
	windows.CloseHandle(process)
	if err != nil {
		_ = windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
		return err
	}
	t.proc, t.pid, t.mech = proc, int(pid), MechJobObject
	t.sys = &osTree{job: job}
	if notApplied != nil {
		t.limitErr = notApplied
		t.log.Warn("resource limits not applied", "error", notApplied)
	}
	return nil
}

// launch is what CreateProcessW takes, as UTF-16.
type launch struct {
	app, cmdline, dir []uint16
	env               []uint16
}

// newLaunch converts the launch parameters. The program is lpApplicationName, so no
// search path is used and no extension is added; argv[0] of the command line is the same
// path, and arguments are quoted by the rules CommandLineToArgvW and the C runtimes parse
// (windows.ComposeCommandLine), never by a shell.
func newLaunch(cfg *Config, dir string) (*launch, error) {
	for _, a := range cfg.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, errors.New("an argument contains NUL")
		}
	}
	if strings.IndexByte(dir, 0) >= 0 {
		return nil, errors.New("the working directory contains NUL")
	}
	env, err := envBlock(cfg.env())
	if err != nil {
		return nil, err
	}
	l := &launch{env: env}
	// The command line buffer must be writable (CreateProcessW may modify it): it is a
	// fresh slice here.
	if l.app, err = windows.UTF16FromString(cfg.Path); err != nil {
		return nil, err
	}
	if l.cmdline, err = windows.UTF16FromString(windows.ComposeCommandLine(append([]string{cfg.Path}, cfg.Args...))); err != nil {
		return nil, err
	}
	if l.dir, err = windows.UTF16FromString(dir); err != nil {
		return nil, err
	}
	return l, nil
}

// childHandles returns the handles of the three files the child gets. A nil or closed
// *os.File has the handle value INVALID_HANDLE_VALUE, which is also the pseudo-handle of
// the current process: duplicating it would hand the adapter a full-access handle to
// the host. Such a Config.Stderr is refused.
func childHandles(files *stdio) ([3]windows.Handle, error) {
	var std [3]windows.Handle
	for i, f := range files.child {
		h := windows.InvalidHandle
		if f != nil {
			h = windows.Handle(f.Fd())
		}
		if h == 0 || h == windows.InvalidHandle {
			return std, fmt.Errorf("standard handle %d of the adapter (Config.Stderr for 2) is a nil, closed or invalid file", i)
		}
		std[i] = h
	}
	return std, nil
}

// createInJob starts the adapter so that it runs no code of its own outside the job: it
// is created suspended and inside the job (PROC_THREAD_ATTRIBUTE_JOB_LIST, Windows 10+,
// which every Windows Go supports has); should the attribute be refused, it is assigned
// to the job before its main thread is resumed. If anything fails after creation the
// suspended process is terminated, never left behind. Only inheritable duplicates of
// its three standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), and they
// are closed here whatever happens. breakaway asks that it leave the host's own job
// (see nestingPlan). It returns the pid and the process handle, which the
// caller closes.
func createInJob(l *launch, std [3]windows.Handle, job windows.Handle, breakaway bool) (uint32, windows.Handle, error) {
	// A handle list needs inheritable handles. Go's own StartProcess always passes a
	// handle list too, so these duplicates cannot leak into a process it starts meanwhile
	// (syscall.ForkLock is not used on Windows).
	self := windows.CurrentProcess()
	var inherit [3]windows.Handle
	defer closeHandles(inherit[:])
	for i, h := range std {
		if err := windows.DuplicateHandle(self, h, self, &inherit[i], 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			return 0, 0, fmt.Errorf("duplicating standard handle %d: %w", i, err)
		}
	}

	attrs, err := windows.NewProcThreadAttributeList(2)
	if err != nil {
		return 0, 0, err
	}
	defer attrs.Delete()
	// The container keeps the pointed-to arrays reachable until Delete.
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&inherit[0]), uintptr(len(inherit))*unsafe.Sizeof(inherit[0])); err != nil {
		return 0, 0, fmt.Errorf("handle list attribute: %w", err)
	}
	jobs := &[1]windows.Handle{job}
	inJob := attrs.Update(procThreadAttributeJobList, unsafe.Pointer(&jobs[0]), unsafe.Sizeof(jobs[0])) == nil

	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = inherit[0], inherit[1], inherit[2]
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT |
		windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_NO_WINDOW)
	if breakaway {
		flags |= windows.CREATE_BREAKAWAY_FROM_JOB
	}
	var pi windows.ProcessInformation
	if err := windows.CreateProcess(&l.app[0], &l.cmdline[0], nil, nil, true, flags, &l.env[0], &l.dir[0], &si.StartupInfo, &pi); err != nil {
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

var procIsProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// hostNesting inspects the job the host runs in, if any, and returns nestingPlan's
// decision. When the host's job cannot be queried the start goes ahead as if it could be
// nested: CreateProcess then fails with the system's own error if it cannot.
func hostNesting(t *Tree) (breakaway bool, err error) {
	h, qerr := queryHostJob()
	if qerr != nil {
		t.log.Debug("the host's job object could not be queried", "error", qerr)
	}
	return nestingPlan(h)
}

func queryHostJob() (hostJob, error) {
	var in int32
	if r, _, e := procIsProcessInJob.Call(uintptr(windows.CurrentProcess()), 0, uintptr(unsafe.Pointer(&in))); r == 0 {
		return hostJob{}, os.NewSyscallError("IsProcessInJob", e)
	}
	if in == 0 {
		return hostJob{}, nil
	}
	h := hostJob{inJob: true}
	// A nil job handle names the calling process's immediate job.
	var ui windows.JOBOBJECT_BASIC_UI_RESTRICTIONS
	if err := windows.QueryInformationJobObject(0, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui)), nil); err != nil {
		return h, os.NewSyscallError("QueryInformationJobObject", err)
	}
	h.uiLimits = ui.UIRestrictionsClass
	var ext windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(0, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&ext)), uint32(unsafe.Sizeof(ext)), nil); err != nil {
		return h, os.NewSyscallError("QueryInformationJobObject", err)
	}
	h.limitFlags = ext.BasicLimitInformation.LimitFlags
	return h, nil
}
