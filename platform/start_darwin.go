package platform

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// osTree is the macOS supervision state: the adapter leads its own process group.
type osTree struct {
	pgid int
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
	proc, err := os.StartProcess(cfg.Path, append([]string{cfg.Path}, cfg.Args...), attr)
	if err != nil {
		return err
	}
	t.proc, t.pid, t.mech = proc, proc.Pid, MechProcessGroup
	t.sys = &osTree{pgid: proc.Pid}
	if cfg.Resources != (Resources{}) {
		t.limitErr = &LimitError{Limits: requestedLimits(cfg.Resources), Reason: "macOS has no per-tree limits"}
	}
	return nil
}

func osReaped(*Tree) {}

func (*osTree) cgroupPath() string { return "" }

// members lists the processes of the group that still run (zombies excluded).
func (s *osTree) members() ([]int, error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", s.pgid)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		if p.Proc.P_stat != sZOMB {
			out = append(out, int(p.Proc.P_pid))
		}
	}
	return out, nil
}

// sZOMB is the p_stat of a zombie (sys/proc.h).
const sZOMB = 5

func (s *osTree) kill(_ context.Context, t *Tree) error {
	var errs []error
	if err := t.proc.Signal(os.Kill); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, err)
	}
	// Members keep the group id from being reused, so it is only signalled while some exist.
	if m, err := s.members(); err != nil {
		errs = append(errs, err)
	} else if len(m) > 0 {
		if err := unix.Kill(-s.pgid, unix.SIGKILL); err != nil && err != unix.ESRCH {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// verify waits until the direct child is reaped and the group has no running member,
// woken by kqueue NOTE_EXIT events on the members. Its limit (see the package doc): a
// descendant that left the group with setsid or setpgid is not seen.
func (s *osTree) verify(ctx context.Context, t *Tree) error {
	backoff := time.Millisecond
	for {
		m, err := s.members()
		if err == nil && len(m) == 0 && t.ExitState() != nil {
			return nil
		}
		if ctx.Err() != nil {
			reason := "process group still has members: " + context.Cause(ctx).Error()
			if err != nil {
				reason = "process group cannot be listed: " + err.Error()
			}
			return &UnverifiedError{Mechanism: t.mech, Pids: m, Reason: reason}
		}
		wake := time.Now().Add(backoff)
		if d, ok := ctx.Deadline(); ok && d.Before(wake) {
			wake = d
		}
		waitExitEvents(ctx, m, time.Until(wake))
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

// waitExitEvents returns when one of pids exits (kqueue EVFILT_PROC NOTE_EXIT) or after d.
func waitExitEvents(ctx context.Context, pids []int, d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	kq, err := unix.Kqueue()
	if err != nil {
		sleepUntil(ctx, time.Now().Add(d)) // no kqueue: degrade to polling
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
	_, _ = unix.Kevent(kq, changes, events, &ts) // an exit, an already-gone pid (error event) or the timeout
}

func (*osTree) release(*Tree) error { return nil }

// osSweep: macOS records nothing a later host could find (no cgroups); adapters of a
// crashed host end when they read EOF on stdin.
func osSweep(context.Context, hclog.Logger) (SweepReport, error) { return SweepReport{}, nil }
