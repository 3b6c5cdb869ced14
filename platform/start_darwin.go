package platform

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// osTree is the macOS supervision state: the adapter leads its own process group, and
// every process of the tree a scan has seen is remembered by pid and start time.
type osTree struct {
	pgid int

	mu sync.Mutex
	// known maps each process of the tree seen by a scan to its start time, so that a
	// process re-parented out of reach is still found, and a recycled pid is not.
	known map[int]uint64
	// reaped is set, under mu, once the direct child has exited and just before it is
	// reaped: from then on its pid and group id may name unrelated processes and are
	// never signalled again (see scanScope).
	reaped bool
}

func osStart(ctx context.Context, cfg *Config, dir string, files *stdio, t *Tree) error {
	attr := &os.ProcAttr{
		Dir:   dir,
		Env:   cfg.env(),
		Files: []*os.File{files.child[0], files.child[1], files.child[2]},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	protectInheritedFds(cfg)
	proc, err := os.StartProcess(cfg.Path, append([]string{cfg.Path}, cfg.Args...), attr)
	if err != nil {
		return err
	}
	s := &osTree{pgid: proc.Pid}
	t.proc, t.pid, t.mech, t.sys = proc, proc.Pid, MechProcessGroup, s
	t.beforeReap = func() { s.beforeReap(t) }
	if cfg.Resources != (Resources{}) {
		t.limitErr = &LimitError{Limits: requestedLimits(cfg.Resources), Reason: "macOS has no per-tree limits"}
	}
	return nil
}

func osReaped(*Tree) {}

func (*osTree) cgroupPath() string { return "" }

// sZOMB is the p_stat of a zombie (sys/proc.h).
const sZOMB = 5

// procTable lists every process of the system (sysctl kern.proc.all).
func procTable() ([]procStat, error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(procs))
	for i := range procs {
		out = append(out, kinfoStat(&procs[i]))
	}
	return out, nil
}

func kinfoStat(p *unix.KinfoProc) procStat {
	state := byte('R')
	if p.Proc.P_stat == sZOMB {
		state = 'Z'
	}
	tv := p.Proc.P_starttime
	return procStat{
		pid: int(p.Proc.P_pid), ppid: int(p.Eproc.Ppid), pgid: int(p.Eproc.Pgid), state: state,
		start: uint64(tv.Sec)*1e6 + uint64(tv.Usec),
	}
}

// sameProcess reports whether pid still is the running process that started at start.
func sameProcess(pid int, start uint64) bool {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || p.Proc.P_pid != int32(pid) {
		return false
	}
	s := kinfoStat(p)
	return s.start == start && s.alive()
}

// scan finds the living processes of the tree and remembers them.
func (s *osTree) scan(t *Tree) ([]procStat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scanLocked(t)
}

func (s *osTree) scanLocked(t *Tree) ([]procStat, error) {
	all, err := procTable()
	if err != nil {
		return nil, err
	}
	if s.known == nil {
		s.known = make(map[int]uint64)
	}
	roots, pgid := scanScope(t.pid, s.pgid, s.reaped)
	found := treeOf(all, roots, pgid, s.known)
	for _, p := range found {
		s.known[p.pid] = p.start
	}
	return found, nil
}

// beforeReap runs on the reaping goroutine when the direct child has exited and before
// it is reaped (kqueue NOTE_EXIT; a zombie still holds its pid and its group id): it
// records the group's members and the child's descendants, then marks the child reaped
// so that neither id is ever signalled again.
func (s *osTree) beforeReap(t *Tree) {
	waitZombie(t.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.scanLocked(t)
	s.reaped = true
}

// waitZombie returns once the child pid has exited (it stays unreaped: only the caller's
// goroutine reaps it). It waits on kqueue NOTE_EXIT, and checks the process table between
// waits, since a registration on a process that already exited fails (ESRCH) or may never
// fire.
func waitZombie(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		kq = -1
	} else {
		defer unix.Close(kq)
	}
	ts := unix.NsecToTimespec((100 * time.Millisecond).Nanoseconds())
	for {
		p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil || p.Proc.P_pid != int32(pid) || p.Proc.P_stat == sZOMB {
			return
		}
		if kq < 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		change := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC,
			Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
		events := make([]unix.Kevent_t, 1)
		n, err := unix.Kevent(kq, change, events, &ts)
		switch {
		case err == unix.EINTR:
		case err != nil:
			time.Sleep(10 * time.Millisecond) // kevent unusable: poll the table
		case n > 0 && events[0].Flags&unix.EV_ERROR == 0:
			return // NOTE_EXIT
		case n > 0:
			// Registration refused: ESRCH means exited; the table check says so.
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// kill signals the direct child, then kills the group (while the child is unreaped) and
// every process of the tree a scan finds, in bounded rounds.
func (s *osTree) kill(_ context.Context, t *Tree) error {
	var errs []error
	if err := t.proc.Signal(os.Kill); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, err)
	}
	err := killGroupTree(&s.mu, &s.reaped, s.pgid, func() ([]procStat, error) { return s.scan(t) })
	return errors.Join(append(errs, err)...)
}

// verify waits until the direct child is reaped and no process of the tree a scan can
// find runs, woken by kqueue NOTE_EXIT events. Even then it cannot give proof (R63): a
// descendant that left the process group (setsid, setpgid) and whose parent exited
// before a scan saw it is re-parented to launchd and leaves no trace to follow. So it
// always ends with an *UnverifiedError, whose Pids name what still ran if ctx ended first.
func (s *osTree) verify(ctx context.Context, t *Tree) error {
	backoff := time.Millisecond
	for {
		found, err := s.scan(t)
		if err == nil && len(found) == 0 && t.ExitState() != nil {
			return &UnverifiedError{Mechanism: t.mech, Reason: "macOS has no cgroup or PID namespace: " +
				"processes that leave the process group and are re-parented cannot be seen, so the end cannot be proven"}
		}
		if ctx.Err() != nil {
			reason := "processes of the tree still run: " + context.Cause(ctx).Error()
			if err != nil {
				reason = "the process table cannot be read: " + err.Error()
			}
			return &UnverifiedError{Mechanism: t.mech, Pids: pidsOf(found), Reason: reason}
		}
		wake := time.Now().Add(backoff)
		if d, ok := ctx.Deadline(); ok && d.Before(wake) {
			wake = d
		}
		waitExitEvents(ctx, pidsOf(found), wake)
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

// waitExitEvents returns when one of pids exits (kqueue EVFILT_PROC NOTE_EXIT), at wake,
// or when ctx ends. A registration the kernel refuses (a pid already gone: ESRCH) comes
// back at once as an EV_ERROR event: it is not an exit to react to, so the wait goes on
// until wake rather than spinning.
func waitExitEvents(ctx context.Context, pids []int, wake time.Time) {
	d := time.Until(wake)
	if d <= 0 {
		return
	}
	kq, err := unix.Kqueue()
	if err != nil {
		sleepUntil(ctx, wake) // no kqueue: degrade to polling
		return
	}
	defer unix.Close(kq)
	changes := make([]unix.Kevent_t, 0, len(pids))
	for _, p := range pids {
		changes = append(changes, unix.Kevent_t{
			Ident:  uint64(p),
			Filter: unix.EVFILT_PROC,
			Flags:  unix.EV_ADD | unix.EV_ONESHOT,
			Fflags: unix.NOTE_EXIT,
		})
	}
	events := make([]unix.Kevent_t, 1)
	ts := unix.NsecToTimespec(d.Nanoseconds())
	n, err := unix.Kevent(kq, changes, events, &ts)
	if err != nil || (n > 0 && events[0].Flags&unix.EV_ERROR != 0) {
		sleepUntil(ctx, wake)
	}
}

func (*osTree) release(*Tree) error { return nil }

// osSweep: macOS records nothing a later host could find (no cgroups); adapters of a
// crashed host end when they read EOF on stdin.
func osSweep(context.Context, hclog.Logger) (SweepReport, error) { return SweepReport{}, nil }
