package platform

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/platform/internal/launch"
)

// launcherExe is what a sandboxed start executes first: the host's own binary, which
// becomes the launcher stage (package platform/internal/launch) and then the adapter.
const launcherExe = "/proc/self/exe"

// launchStatusMax bounds what the host reads from the status pipe.
const launchStatusMax = 4096

// launcherRoom is how many more tasks than Resources.MaxProcesses the adapter's pids
// limit allows while the launcher runs: the launcher is a Go program, whose runtime
// starts a few threads before it executes the adapter (which leaves one).
const launcherRoom = 16

// startLaunched starts a sandboxed adapter: the spawner thread (unrestricted, so the
// host keeps its parent-death signal and cgroup v1 semantics) forks the launcher with
// the attempt's namespaces and cgroup; the launcher applies plan to itself and executes
// the adapter. It returns once the adapter is executing, or with the launcher's
// *SandboxError, the launcher reaped. exe and attr are what an unsandboxed start would
// execute (attr.Files holds the adapter's descriptors, with a pinned script's as fd 3);
// cg is the attempt's cgroup v2, or nil.
//
// With a process limit (Resources.MaxProcesses, or the sandbox default: cfg holds the
// effective value), the pids limit leaves launcherRoom more tasks until the launcher is
// ready; it then waits on the hold pipe until the host has lowered the limit to
// MaxProcesses, so that the adapter never runs under the wider one. Where no pids cgroup
// holds the tree but it has a user namespace of its own, the launcher sets RLIMIT_NPROC
// to the limit instead, right before it executes the adapter (limits_linux.go).
//
// With reaper (a start with neither cgroup v2 nor PID namespace) the launcher stays as
// the adapter's reaper (launch.Spec.Reaper, reaper_linux.go): the process returned is
// the reaper, and the link its status and control pipes and the adapter's pid. A pids
// cgroup v1 then keeps its launcherRoom: the reaper's threads count there for as long
// as the adapter runs, and a reaper refused a thread would end without its proof.
func startLaunched(ctx context.Context, cfg *Config, plan *sandboxPlan, cg *cgroup, v1 *v1Limits, exe string, argv []string, attr *os.ProcAttr, reaper bool) (*os.Process, *reaperLink, error) {
	var exeFile *os.File
	if cfg.pin != nil && cfg.pin.sealed && cfg.pin.child == nil {
		// A pinned native executable: the host's close-on-exec descriptor does not
		// survive the launcher's own exec, so it is passed as fd 7.
		exeFile, exe = cfg.pin.extra, "/proc/self/fd/"+strconv.Itoa(launch.FdExe)
	}
	maxProcs := cfg.Resources.MaxProcesses
	spec, err := plan.specFile(&launch.Spec{Path: exe, Argv: argv, Env: plan.env, Filter: plan.filter,
		Rules: plan.rulesFile != nil, Script: len(attr.Files) > launch.FdScript, Hold: maxProcs > 0,
		Reaper: reaper})
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating the launcher's status pipe: %w", err)
	}
	var ctlR, ctlW *os.File
	if reaper {
		if ctlR, ctlW, err = os.Pipe(); err != nil {
			r.Close()
			w.Close()
			return nil, nil, fmt.Errorf("creating the reaper's control pipe: %w", err)
		}
	}
	keep := false // r and ctlW: kept by a started reaper's link
	defer func() {
		if !keep {
			r.Close()
			if ctlW != nil {
				ctlW.Close()
			}
		}
	}()
	var holdR, holdW *os.File
	var lower []string // the pids.max files to lower to maxProcs once the launcher is ready
	if maxProcs > 0 {
		if holdR, holdW, err = os.Pipe(); err != nil {
			w.Close()
			if ctlR != nil {
				ctlR.Close()
			}
			return nil, nil, fmt.Errorf("creating the launcher's hold pipe: %w", err)
		}
		defer holdW.Close()
		if cg != nil && writeExisting(cg.file("pids.max"), strconv.Itoa(maxProcs+launcherRoom)) == nil {
			lower = append(lower, cg.file("pids.max"))
		}
		if v1 != nil && v1.pids != nil {
			v1.launcherRoom = launcherRoom
		}
	}
	userns := attr.Sys != nil && attr.Sys.Cloneflags&syscall.CLONE_NEWUSER != 0
	v2pids := len(lower) > 0
	files := append([]*os.File(nil), attr.Files...)
	for len(files) < launch.FdSpec {
		files = append(files, nil)
	}
	files = append(files, spec, plan.rulesFile, w, exeFile, holdR)
	if ctlR != nil {
		files = append(files, ctlR)
	}
	lattr := *attr
	lattr.Files = files
	// The launcher's own environment: only what keeps its runtime small (it executes
	// the adapter with the adapter's environment from the specification).
	lattr.Env = []string{"GOMAXPROCS=1"}
	proc, err := spawn(ctx, func() (*os.Process, error) {
		protectInheritedFds(cfg)
		return v1.fork(func() (*os.Process, error) {
			// v1.fork has entered the v1 cgroups, or given them up (v1.pids nil): only
			// now is it known whether a pids cgroup holds the tree (limits_linux.go).
			v1pids := v1 != nil && v1.pids != nil
			if v1pids && !reaper {
				lower = append(lower, v1.pids.file("pids.max"))
			}
			if nprocByRlimit(maxProcs, userns, v2pids || v1pids) {
				lattr.Env = append(lattr.Env, launch.EnvNProc+"="+strconv.Itoa(maxProcs))
			}
			return os.StartProcess(launcherExe, []string{launch.Arg0, launch.Arg1}, &lattr)
		})
	})
	w.Close()
	if holdR != nil {
		holdR.Close()
	}
	if ctlR != nil {
		ctlR.Close()
	}
	if err != nil {
		for _, f := range lower {
			_ = writeExisting(f, strconv.Itoa(maxProcs))
		}
		return nil, nil, err
	}
	adapter, err := awaitLaunch(ctx, r, reaper, func() error {
		if holdW == nil {
			return nil
		}
		for _, f := range lower {
			if err := writeExisting(f, strconv.Itoa(maxProcs)); err != nil {
				return &SandboxError{Step: "lowering the pids limit after the launcher", Err: err}
			}
		}
		_, err := holdW.Write([]byte{1})
		return err
	})
	if err == nil && reaper {
		keep = true
		return proc, &reaperLink{status: r, ctl: ctlW, adapter: adapter}, nil
	}
	if err == nil {
		return proc, nil, nil
	}
	_ = proc.Kill()
	state, _ := proc.Wait()
	spawnReaped()
	if errors.Is(err, errLauncherDied) {
		err = &SandboxError{Step: "the launcher stage", Err: fmt.Errorf("%w (%v): a Go program, it needs a few threads and megabytes of the adapter's Resources", errLauncherDied, state)}
	}
	return nil, nil, err
}

var errLauncherDied = errors.New("it ended before executing the adapter")

// awaitLaunch reads the status pipe: the ready byte (then runs ready, which releases
// a held launcher) and its end, or a failed step's report, until ctx ends. From a
// reaper it reads, after the ready byte, launch.Started and the adapter's pid, which
// it returns, and leaves the rest (launch.Done) in the pipe.
func awaitLaunch(ctx context.Context, r *os.File, reaper bool, ready func() error) (int, error) {
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	readErr := func(err error) error {
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading the launcher's status: %w", err)
	}
	var first [1]byte
	if _, err := io.ReadFull(r, first[:]); err == io.EOF {
		return 0, errLauncherDied
	} else if err != nil {
		return 0, readErr(err)
	}
	var head []byte
	if first[0] == launch.Ready {
		if err := ready(); err != nil {
			return 0, err
		}
		if reaper {
			if _, err := io.ReadFull(r, first[:]); err == io.EOF {
				return 0, errLauncherDied
			} else if err != nil {
				return 0, readErr(err)
			}
			if first[0] == launch.Started {
				var pid [4]byte
				if _, err := io.ReadFull(r, pid[:]); err != nil {
					return 0, errLauncherDied
				}
				return int(binary.BigEndian.Uint32(pid[:])), nil
			}
			head = first[:]
		}
	} else {
		head = first[:]
	}
	rest, err := io.ReadAll(io.LimitReader(r, launchStatusMax))
	if err != nil {
		return 0, readErr(err)
	}
	if len(head) == 0 && len(rest) == 0 && !reaper {
		return 0, nil // ready, then the end of file: the exec closed the pipe
	}
	if len(head) == 0 && len(rest) == 0 {
		return 0, errLauncherDied
	}
	step, cause := launch.ParseStatus(append(head, rest...))
	return 0, &SandboxError{Step: step, Err: cause}
}

// specFile writes s into a memory file for the launcher (once per plan: every attempt
// of a start passes the same one, but for Reaper, which only the last may set).
func (p *sandboxPlan) specFile(s *launch.Spec) (*os.File, error) {
	if p.spec != nil && p.specReaper == s.Reaper {
		return p.spec, nil
	}
	if p.spec != nil {
		p.spec.Close()
		p.spec = nil
	}
	fd, err := unix.MemfdCreate("adapterkit-launch", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
	if err == unix.EINVAL {
		fd, err = unix.MemfdCreate("adapterkit-launch", unix.MFD_CLOEXEC) // before Linux 6.3
	}
	if err != nil {
		return nil, fmt.Errorf("creating the launch specification: %w", err)
	}
	f := os.NewFile(uintptr(fd), "adapterkit-launch")
	if _, err := f.Write(launch.Encode(s)); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the launch specification: %w", err)
	}
	p.spec, p.specReaper = f, s.Reaper
	return f, nil
}
