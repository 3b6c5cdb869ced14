package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupSeq numbers the per-adapter cgroups of this host.
var cgroupSeq atomic.Uint64

// osTree is the Linux supervision state of one Tree.
type osTree struct {
	cg    *cgroup   // nil when no cgroup is used
	v1    *v1Limits // nil when no cgroup v1 holds limits
	pidns bool
	pgid  int
	// noProof is why Verify cannot prove the end of the tree ("" when it can).
	noProof string
	// sandbox is the sandbox of the tree (nil: none).
	sandbox *sandboxPlan
	// reaper links to the adapter's reaper, the tree's direct child (nil: none).
	reaper *reaperLink

	mu       sync.Mutex
	known    map[int]uint64 // pgroup fallback: descendants seen so far (pid -> start time)
	reaped   bool           // the direct child is (about to be) reaped: its pid and pgid may be reused
	released bool           // the cgroups are removed: hit is final
	hit      error          // LimitHit as read before the cgroups were removed
}

func (s *osTree) cgroupPath() string {
	if s.cg == nil {
		return ""
	}
	return s.cg.path
}

func osStart(ctx context.Context, cfg *Config, dir string, files *stdio, t *Tree) error {
	log := t.log
	s := &osTree{}
	maxProcs, dfltProcs := cfg.processLimit()
	if maxProcs != cfg.Resources.MaxProcesses {
		eff := *cfg // the sandbox default (or no limit for a negative value); cfg is the caller's
		eff.Resources.MaxProcesses = maxProcs
		cfg = &eff
	}
	c := newChoice(cfg)
	if c.wantCgroup {
		if cg, err := prepareCgroup(cfg); err != nil {
			log.Debug("no cgroup for the adapter, falling back", "error", err)
			c.cgroupWhy = "no cgroup: " + err.Error()
		} else {
			s.cg = cg
		}
	}
	var plan *sandboxPlan
	if cfg.Sandbox != nil {
		var err error
		if plan, err = planSandbox(cfg); err != nil {
			if s.cg != nil {
				_ = s.cg.remove()
			}
			return err
		}
		defer plan.closeRules()
	}
	if want := v2Missing(s.cg, cfg.Resources); len(want) > 0 && cfg.Isolation != IsolationProcessGroup {
		name := ""
		if s.cg != nil {
			name = filepath.Base(s.cg.path)
		} else if n, err := cgroupName(cgroupSeq.Add(1)); err == nil {
			name = n
		}
		if name != "" {
			s.v1 = newV1Limits(want, cfg.Resources, name)
		}
	}
	attempts := c.attempts(s.cg != nil)
	argv := append([]string{cfg.Path}, cfg.Args...)
	var proc *os.Process
	var used attempt
	var err error
	for _, a := range attempts {
		proc, s.reaper, err = startAttempt(ctx, cfg, dir, argv, files, s.cg, s.v1, plan, a)
		if err == nil {
			used = a
			break
		}
		c.failed(a, err)
		log.Debug("start attempt failed", "cgroup", a.cgroup, "pidns", a.pidns, "userns", a.userns, "error", err)
		if ctx.Err() != nil || errors.As(err, new(*SandboxError)) {
			break // the launcher ran: a weaker attempt would fail the same way
		}
	}
	if !used.cgroup && s.cg != nil {
		if rerr := s.cg.remove(); rerr != nil {
			log.Warn("could not remove unused adapter cgroup", "path", s.cg.path, "error", rerr)
		}
		s.cg = nil
	}
	procsBy := ""
	if err == nil {
		procsBy = s.processLimitBy(cfg, used)
		if s.reaper != nil && procsBy == "pids cgroup v1" {
			procsBy += fmt.Sprintf(" (%d more shared with the reaper's threads)", launcherRoom)
		}
		t.limitErr = s.limitError(cfg.Resources, used.cgroup, procsBy == byRlimit)
		if t.limitErr != nil && dfltProcs {
			le := t.limitErr.(*LimitError)
			le.Reason += fmt.Sprintf(" (processes: the default limit of a sandboxed adapter, %d; Resources.MaxProcesses -1 turns it off)", maxProcs)
		}
	}
	if s.v1 != nil && (err != nil || len(s.v1.applied()) == 0) {
		if rerr := s.v1.release(); rerr != nil {
			log.Warn("could not remove unused adapter cgroup v1", "error", rerr)
		}
		s.v1 = nil
	}
	if err != nil {
		if plan != nil {
			plan.release()
		}
		return err
	}
	t.proc, t.pid, t.sys = proc, proc.Pid, s
	s.sandbox = plan
	s.pidns, s.pgid = used.pidns, proc.Pid
	switch {
	case used.pidns:
	case used.cgroup:
		s.noProof = cgroupNoProof(cfg, s.cg, plan)
	case s.reaper != nil:
		s.noProof = reaperNoProof(plan)
		t.adapterPid = s.reaper.adapter
	default:
		s.noProof = noProofPgroup
	}
	t.beforeReap = func() { s.beforeReap(t) }
	t.sup = c.supervision(usedMechanism(used), used, attempts)
	if s.reaper != nil {
		t.sup.Mechanism |= MechReaper
	}
	if plan != nil {
		t.sup.Mechanism |= plan.mech
		t.sup.Sandbox = plan.desc + "; " + processLimitDesc(maxProcs, dfltProcs, procsBy) + "; " + inotifyDesc(cfg.Sandbox)
		t.sup.Derived = plan.derived
		t.sup.Dropped = append(t.sup.Dropped, plan.dropped...)
		plan.warnGaps(log, cfg.Path)
	}
	t.mech = t.sup.Mechanism
	t.sup.NoProof = s.noProof
	if s.v1 != nil {
		log.Debug("resource limits applied through cgroup v1", "limits", s.v1.applied())
	}
	if len(t.sup.Dropped) > 0 {
		log.Debug("supervision", "in_effect", t.sup.Mechanism.String(), "dropped", t.sup.String())
	}
	if t.limitErr != nil {
		log.Warn("resource limits not applied", "error", t.limitErr)
	}
	return nil
}

// noProofPgroup is why a tree without a cgroup or PID namespace is never proven gone.
const noProofPgroup = "no cgroup or PID namespace: processes that leave the process group and are re-parented cannot be seen, so the end cannot be proven"

// usedMechanism is what supervises a tree started by the attempt a.
func usedMechanism(a attempt) Mechanism {
	m := MechProcessGroup | MechParentDeathSignal
	if a.cgroup {
		m |= MechCgroup
	}
	if a.pidns {
		m |= MechPidNamespace
	}
	if a.userns {
		m |= MechUserNamespace
	}
	if currentHostOptions().ChildSubreaper {
		m |= MechSubreaper
	}
	return m
}

// prepareCgroup creates the adapter's cgroup under the parent cgroupParent finds.
func prepareCgroup(cfg *Config) (*cgroup, error) {
	parent, err := cgroupParent(cfg)
	if err != nil {
		return nil, err
	}
	return newCgroup(parent, cgroupSeq.Add(1), cfg.Resources)
}

// v2Missing names the limits of res that the cgroup v2 cg does not apply (all of them
// when cg is nil).
func v2Missing(cg *cgroup, res Resources) []string {
	if cg == nil {
		return requestedLimits(res)
	}
	var le *LimitError
	if errors.As(cg.limitErr, &le) {
		return le.Limits
	}
	return nil
}

// byRlimit is what processLimitBy names for RLIMIT_NPROC.
const byRlimit = "RLIMIT_NPROC in its user namespace"

// processLimitBy names what applies the process limit of cfg to the tree started by
// the attempt a: "pids cgroup v2", "pids cgroup v1", byRlimit (a sandboxed start only,
// see limits_linux.go), or "" for nothing (or no limit).
func (s *osTree) processLimitBy(cfg *Config, a attempt) string {
	if cfg.Resources.MaxProcesses <= 0 {
		return ""
	}
	v2 := a.cgroup && s.cg != nil && !slices.Contains(v2Missing(s.cg, cfg.Resources), "processes")
	v1 := s.v1 != nil && slices.Contains(s.v1.applied(), "processes")
	switch {
	case v2:
		return "pids cgroup v2"
	case v1:
		return "pids cgroup v1"
	case cfg.Sandbox != nil && nprocByRlimit(cfg.Resources.MaxProcesses, a.userns, false):
		return byRlimit
	}
	return ""
}

// limitError is the *LimitError for the limits of res that neither the cgroup v2 (when
// used) nor the cgroup v1 fallback applies (nor, with procsByRlimit, RLIMIT_NPROC: the
// processes limit), nil when all are applied.
func (s *osTree) limitError(res Resources, v2used, procsByRlimit bool) error {
	var reasons []string
	var missing []string
	v2missing := requestedLimits(res)
	if v2used {
		v2missing = v2Missing(s.cg, res)
		var le *LimitError
		if errors.As(s.cg.limitErr, &le) {
			reasons = append(reasons, le.Reason)
		}
	} else if len(v2missing) > 0 {
		reasons = append(reasons, "no cgroup v2 is used for this adapter")
	}
	var byV1 []string
	if s.v1 != nil {
		byV1 = s.v1.applied()
		reasons = append(reasons, s.v1.reasons...)
	}
	for _, l := range v2missing {
		if !slices.Contains(byV1, l) && !(l == "processes" && procsByRlimit) {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &LimitError{Limits: missing, Reason: strings.Join(reasons, "; ")}
}

func startAttempt(ctx context.Context, cfg *Config, dir string, argv []string, files *stdio, cg *cgroup, v1 *v1Limits, plan *sandboxPlan, a attempt) (*os.Process, *reaperLink, error) {
	sys := &syscall.SysProcAttr{
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	nsAttr(sys, a)
	if attemptHook != nil {
		if err := attemptHook(a); err != nil {
			return nil, nil, err
		}
	}
	if a.cgroup {
		dirf, err := cg.openDir()
		if err != nil {
			return nil, nil, err
		}
		defer dirf.Close()
		sys.UseCgroupFD, sys.CgroupFD = true, int(dirf.Fd())
	}
	attr := &os.ProcAttr{
		Dir:   dir,
		Env:   cfg.env(),
		Files: []*os.File{files.child[0], files.child[1], files.child[2]},
		Sys:   sys,
	}
	exe := execPath(cfg, attr) // a pinned start executes its hashed descriptor (pin_linux.go)
	if plan != nil {
		// A session of its own (its own process group too, as Setpgid would make it):
		// the host's controlling terminal is not the adapter's, so a terminal it is
		// handed (Config.Stderr) cannot be used for job control over the host or, with
		// TIOCSTI (refused by the filter as well), to type commands into it.
		sys.Setsid, sys.Setpgid = true, false
		var acg *cgroup
		if a.cgroup {
			acg = cg
		}
		return startLaunched(ctx, cfg, plan, acg, v1, exe, argv, attr, !a.cgroup && !a.pidns)
	}
	proc, err := spawn(ctx, func() (*os.Process, error) {
		protectInheritedFds(cfg)
		return v1.fork(func() (*os.Process, error) { return os.StartProcess(exe, argv, attr) })
	})
	return proc, nil, err
}

func osReaped(t *Tree) {
	if t.sys != nil && t.sys.sandbox != nil {
		t.sys.sandbox.release()
	}
	spawnReaped()
}

func (s *osTree) kill(ctx context.Context, t *Tree) error {
	if s.reaper != nil {
		_, _ = s.scan(t) // for the walk below, should the reaper be gone without proof
		select {
		case <-t.exited:
			if s.reaper.proven(ctx) {
				return nil // it killed and reaped every descendant
			}
			return s.killWalk(t)
		default:
			// The reaper kills the tree: killing the reaper instead would leave it
			// nothing but a walk.
			s.reaper.end()
			return nil
		}
	}
	var errs []error
	s.noteCgroupMembers()
	if s.cg == nil && !s.pidns {
		// Before the adapter dies: descendants re-parented to it (a sandboxed adapter is
		// a child subreaper) leave its tree with it, and are then followed only as
		// processes recorded here.
		_, _ = s.scan(t)
	}
	if s.cg != nil {
		if err := s.cg.kill(); err != nil {
			errs = append(errs, fmt.Errorf("cgroup.kill: %w", err))
		}
	}
	// pidfd-based: never hits a recycled pid. In a PID namespace this kills all of it.
	if err := t.proc.Signal(os.Kill); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, err)
	}
	if s.cg == nil && s.v1 != nil {
		errs = append(errs, s.v1.kill())
	}
	if s.cg == nil && !s.pidns {
		errs = append(errs, s.killWalk(t))
	}
	return errors.Join(errs...)
}

// killWalk is the process-group fallback: kill the group and every descendant a walk of
// /proc can find, a few rounds to catch processes forked meanwhile.
func (s *osTree) killWalk(t *Tree) error {
	return killGroupTree(&s.mu, &s.reaped, s.pgid, func() ([]procStat, error) { return s.scan(t) })
}

// beforeReap runs when the direct child has exited, before it is reaped. Until then
// its pid, which is also the process group id, cannot be reused; once it is reaped both
// may name unrelated processes. So the process-group fallback records the group's
// members now, and from then on follows only processes it recorded (by pid and start
// time) and their descendants.
func (s *osTree) beforeReap(t *Tree) {
	if !awaitExit(t.pid) {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, t.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break // on an error Wait reports it; the snapshot is then best effort
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cg == nil && !s.pidns {
		_, _ = s.scanLocked(t)
	}
	s.reaped = true
}

// scan finds the living descendants and group members, and remembers them so that a
// later scan still finds them after they were re-parented.
func (s *osTree) scan(t *Tree) ([]procStat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scanLocked(t)
}

func (s *osTree) scanLocked(t *Tree) ([]procStat, error) {
	if s.known == nil {
		s.known = make(map[int]uint64)
	}
	roots, pgid := scanScope(t.pid, s.pgid, s.reaped)
	found, err := descendants(roots, pgid, s.known)
	for _, p := range found {
		s.known[p.pid] = p.start
	}
	return found, err
}

func (s *osTree) verify(ctx context.Context, t *Tree) error {
	mech := t.mech
	switch {
	case s.reaper != nil:
		if !t.waitExited(ctx) {
			found, _ := s.scan(t)
			return &UnverifiedError{Mechanism: mech, Pids: append([]int{t.pid}, pidsOf(found)...),
				Reason: "the adapter's reaper has not ended: " + context.Cause(ctx).Error()}
		}
		if !s.reaper.proven(ctx) {
			return &UnverifiedError{Mechanism: mech, Reason: "the adapter's reaper ended (" + t.ExitState().String() +
				") without reporting every descendant reaped: those re-parented away from it cannot be seen"}
		}
		if s.noProof != "" {
			return &UnverifiedError{Mechanism: mech, Reason: s.noProof}
		}
		return nil
	case s.cg != nil:
		if err := s.cg.waitEmpty(ctx); err != nil {
			return &UnverifiedError{Mechanism: mech, Pids: s.cg.pids(),
				Reason: "cgroup " + s.cg.path + " not proven empty: " + err.Error()}
		}
		if !t.waitExited(ctx) {
			return &UnverifiedError{Mechanism: mech, Pids: []int{t.pid},
				Reason: "the adapter was not reaped: " + context.Cause(ctx).Error()}
		}
		if !s.pidns && s.noProof != "" {
			// Empty, but a process moved out of it would not show: no proof.
			return &UnverifiedError{Mechanism: mech, Reason: s.noProof}
		}
		return nil
	case s.pidns:
		// Reaping a namespace's init returns only after the kernel has killed and
		// released every other process of the namespace.
		if !t.waitExited(ctx) {
			found, _ := s.scan(t)
			return &UnverifiedError{Mechanism: mech, Pids: append([]int{t.pid}, pidsOf(found)...),
				Reason: "PID namespace init not reaped: " + context.Cause(ctx).Error()}
		}
		return nil
	}
	backoff := time.Millisecond
	for {
		found, err := s.scan(t)
		if err == nil && len(found) == 0 && t.ExitState() != nil {
			// A25: a descendant that called setsid and whose parent died before a
			// scan saw it has left every trace a walk can follow.
			return &UnverifiedError{Mechanism: mech, Reason: noProofPgroup}
		}
		if ctx.Err() != nil {
			return &UnverifiedError{Mechanism: mech, Pids: pidsOf(found),
				Reason: "processes of the tree still run: " + context.Cause(ctx).Error()}
		}
		sleepUntil(ctx, time.Now().Add(backoff))
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

func (s *osTree) release(t *Tree) error {
	if s.reaper != nil {
		s.reaper.close()
	}
	s.reapOrphans(t)
	s.mu.Lock()
	s.hit, s.released = s.readLimitHit(), true
	s.mu.Unlock()
	var errs []error
	if s.v1 != nil {
		errs = append(errs, s.v1.release())
	}
	if s.cg == nil {
		return errors.Join(errs...)
	}
	if pop, err := s.cg.populated(); err == nil && pop {
		return errors.Join(append(errs, fmt.Errorf("cgroup %s still has processes %v: left for Sweep", s.cg.path, s.cg.pids()))...)
	}
	return errors.Join(append(errs, s.cg.remove())...)
}

// limitHit reports ErrMemoryLimit when the out-of-memory killer of the tree's memory
// cgroup killed a process of it; after release, what was read before.
func (s *osTree) limitHit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return s.hit
	}
	return s.readLimitHit()
}

func (s *osTree) readLimitHit() error {
	var n int64
	switch {
	case s.v1 != nil && s.v1.mem != nil:
		n, _ = s.v1.oomKills()
	case s.cg != nil && s.cg.memLimit:
		b, err := os.ReadFile(s.cg.file("memory.events"))
		if err != nil {
			return nil
		}
		n, _ = keyedValue(b, "oom_kill")
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: the out-of-memory killer of its memory cgroup killed %d process(es)", ErrMemoryLimit, n)
}

// waitExited waits for the direct child to be reaped, or for ctx to end. A child
// already reaped counts even when ctx has ended too.
func (t *Tree) waitExited(ctx context.Context) bool {
	select {
	case <-t.exited:
		return true
	default:
	}
	select {
	case <-t.exited:
		return true
	case <-ctx.Done():
		return false
	}
}

// hasCapSysAdmin reports whether CAP_SYS_ADMIN (needed for CLONE_NEWPID without a user
// namespace) is in this process's effective set, asked of the kernel (capget(2)) at each
// start: a process may drop capabilities at any time.
func hasCapSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}
