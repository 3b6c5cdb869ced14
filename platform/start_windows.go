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
	if err := disinherit(files); err != nil {
		return err
	}
	limits, notApplied := jobLimits(cfg.Resources)
	job, err := newJob(&limits)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	pid, process, err := createInJob(argv, std, job)
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

// envBlock builds a CREATE_UNICODE_ENVIRONMENT block: each "name=value" NUL-terminated,
// then one more NUL. An empty env gives two NULs, never nil: nil would make the adapter
// inherit the host's environment. Entries keep their order and duplicates, as with
// execve on POSIX (GetEnvironmentVariable, like getenv, finds the first). An empty entry
// would end the block early, silently dropping what follows, and an entry without a
// name is not a variable: both are refused. A leading "=" belongs to the name (the
// per-drive current directories, "=C:=C:\dir").
func envBlock(env []string) ([]uint16, error) {
	var block []uint16
	for _, kv := range env {
		if i := strings.IndexByte(kv, '='); i < 0 || (i == 0 && strings.IndexByte(kv[1:], '=') < 1) {
			return nil, fmt.Errorf("environment entry %q is not name=value", kv)
		}
		u, err := windows.UTF16FromString(kv) // refuses NUL inside, adds the terminator
		if err != nil {
			return nil, fmt.Errorf("environment entry %q contains NUL", kv)
		}
		block = append(block, u...)
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	return append(block, 0), nil
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

// disinherit makes the pipe handles opened for this adapter non-inheritable: os.Pipe
// creates inheritable handles, and a CreateProcess elsewhere in the host with
// bInheritHandles and no handle list (C code) would otherwise inherit the host's end of
// the adapter's stdin and keep the adapter from ever seeing end of input (R49). The
// child gets inheritable duplicates of its ends (createInJob). A caller's Config.Stderr
// file is left as it is.
func disinherit(files *stdio) error {
	fs := []*os.File{files.stdinW, files.stdoutR, files.stderrRead, files.child[0], files.child[1]}
	if files.ownStderr {
		fs = append(fs, files.child[2])
	}
	for _, f := range fs {
		if f == nil {
			continue
		}
		if err := windows.SetHandleInformation(windows.Handle(f.Fd()), windows.HANDLE_FLAG_INHERIT, 0); err != nil {
			return fmt.Errorf("making a pipe handle non-inheritable: %w", err)
		}
	}
	return nil
}

// createInJob starts the adapter so that it runs no code of its own outside the job: it
// is created suspended and inside the job (PROC_THREAD_ATTRIBUTE_JOB_LIST, Windows 10+,
// which every Windows Go supports has); should the attribute be refused, it is assigned
// to the job before its main thread is resumed. If anything fails after creation the
// suspended process is terminated, never left behind. Only inheritable duplicates of
// its three standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), and they
// are closed here whatever happens. It returns the pid and the process handle, which the
// caller closes.
func createInJob(l *launch, std [3]windows.Handle, job windows.Handle) (uint32, windows.Handle, error) {
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
