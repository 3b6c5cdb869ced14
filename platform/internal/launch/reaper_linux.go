package launch

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The reaper (Spec.Reaper). The launcher process is never restricted: one locked
// thread of it applies the sandbox to itself alone (Landlock, seccomp, no_new_privs and
// capabilities are all per thread), starts the adapter and ends, restrictions and all,
// since its goroutine never unlocks it. The process stays as the adapter's parent and a
// child subreaper: whatever the adapter's descendants do (setsid, double forks), a
// process whose parent exits is re-parented to the reaper, so every descendant stays
// below it, and it kills them all before it exits. It holds none of the adapter's
// standard files after the fork, so the adapter still sees its input end when the host
// closes it.

// startedAdapter is what the restricted thread reports: the adapter, or the failed step.
type startedAdapter struct {
	proc     *os.Process
	script   *os.File // the reaper's copy of a pinned script, or nil
	step     string
	err      error
	hostGone bool
}

// runReaper is the launcher stage of a reaper. It returns an exit status on failure
// (after reporting the step), and otherwise never returns: it exits as the adapter did.
func runReaper(spec *Spec, first uint, fail func(string, error) int) int {
	// SIGTERM, the parent-death signal below, asks for the end of the tree: it must
	// not kill this process before the tree; nor must SIGINT or SIGHUP, which another
	// process of the host's user might send (the adapter can signal no process
	// outside its Landlock domain).
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := keepParentDeathSignal(unix.SIGTERM); err != nil {
		return fail("keeping the parent-death signal", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("becoming a child subreaper", err)
	}
	// The adapter inherits only its own descriptors: the specification, the ruleset,
	// the status and control pipes, and the runtime's own, stay here.
	if err := unix.CloseRange(first, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("marking the launcher's descriptors close-on-exec", err)
	}
	// Whether pidfds work is probed once, with signals to this very process: probe it
	// before any thread is restricted.
	_, _ = os.FindProcess(os.Getpid())
	ch := make(chan startedAdapter, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the restricted thread ends with this goroutine
		ch <- startRestricted(spec)
	}()
	res := <-ch
	if res.hostGone {
		return 127
	}
	if res.err != nil {
		return fail(res.step, res.err)
	}
	dropStdio(res.script)
	adapter := res.proc
	msg := binary.BigEndian.AppendUint32([]byte{Started}, uint32(adapter.Pid))
	if err := writeAll(FdStatus, msg); err != nil {
		_ = adapter.Kill() // the host is gone: end the tree below
	}
	var once sync.Once
	end := func() { once.Do(func() { _ = adapter.Kill() }) }
	go func() {
		ctl := os.NewFile(FdCtl, "control")
		var b [1]byte
		_, _ = ctl.Read(b[:]) // a byte, or the end: the host asks for the end, or is gone
		end()
	}()
	go func() {
		<-term
		end()
	}()
	runtime.LockOSThread() // mirror raises the adapter's signal on this thread
	ws := reapAll(adapter.Pid)
	_ = writeAll(FdStatus, []byte{Done})
	return mirror(ws)
}

// startRestricted runs on a locked thread that never returns to the runtime: it
// restricts the thread, says so on the status pipe, waits on the hold pipe when told,
// and starts the adapter from the thread, whose restrictions the adapter inherits.
func startRestricted(spec *Spec) startedAdapter {
	if step, err := restrict(spec); err != nil {
		return startedAdapter{step: step, err: err}
	}
	if err := writeAll(FdStatus, []byte{Ready}); err != nil {
		return startedAdapter{hostGone: true}
	}
	if !awaitHold(spec) {
		return startedAdapter{hostGone: true}
	}
	if v, ok := os.LookupEnv(EnvNProc); ok {
		if err := limitNProc(v); err != nil {
			return startedAdapter{step: "limiting the adapter's processes (RLIMIT_NPROC)", err: err}
		}
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	var script *os.File
	if spec.Script {
		script = os.NewFile(FdScript, "script")
		files = append(files, script)
	}
	p, err := os.StartProcess(spec.Path, spec.Argv, &os.ProcAttr{Env: spec.Env, Files: files})
	if err != nil {
		var no syscall.Errno
		if errors.As(err, &no) {
			err = no
		}
		return startedAdapter{step: "executing the adapter", err: err}
	}
	return startedAdapter{proc: p, script: script}
}

// dropStdio leaves the reaper none of the adapter's files: the null device replaces
// its standard files, and a pinned script's copy is closed.
func dropStdio(script *os.File) {
	if script != nil {
		_ = script.Close()
	}
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	for fd := 0; fd <= 2; fd++ {
		if err != nil || unix.Dup3(null, fd, 0) != nil {
			_ = unix.Close(fd)
		}
	}
	if err == nil {
		_ = unix.Close(null)
	}
}

// reapAll reaps children until the adapter has exited, then kills every child left
// (the processes re-parented here) and reaps until none is left, and returns the
// adapter's wait status. Only this goroutine reaps, so a child's pid cannot be reused
// before it has been killed and reaped here.
func reapAll(adapter int) unix.WaitStatus {
	var ws, adapterWS unix.WaitStatus
	for {
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid == adapter {
			adapterWS = ws
			break
		}
	}
	for {
		for _, pid := range children() {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR || err == nil {
			continue
		}
		return adapterWS // ECHILD: no child is left, zombie or alive
	}
}

// children lists this process's children: from each thread's children file, or, where
// the kernel has none (no CONFIG_PROC_CHILDREN), from every process's parent pid.
func children() []int {
	var pids []int
	tasks, err := os.ReadDir("/proc/self/task")
	if err == nil {
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
			if errors.Is(err, fs.ErrNotExist) {
				if _, serr := os.Stat("/proc/self/task/" + t.Name()); serr == nil {
					return childrenByScan() // the task is there, its children file is not
				}
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		return pids
	}
	return childrenByScan()
}

// childrenByScan finds the processes whose parent is this one in /proc.
func childrenByScan() []int {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(me) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mirror ends the reaper as the adapter ended: with its exit status, or by its signal,
// raised on this thread with the default action restored (the host then reads the
// same wait status as the adapter's). It returns only what to exit with should the
// signal not end the process.
func mirror(ws unix.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		sig := ws.Signal()
		var dfl [4]uint64 // struct sigaction, all zero: SIG_DFL, no flags, empty mask
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		var set unix.Sigset_t
		set.Val[(int(sig)-1)/64] |= 1 << ((uint(sig) - 1) % 64)
		_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
		_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
		return 128 + int(sig)
	}
	return 127
}
