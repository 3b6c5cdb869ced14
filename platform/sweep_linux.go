package platform

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// parseCgroupName splits adapterkit-<pid>-<start>-<seq>.
func parseCgroupName(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	if !ok {
		return 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	_, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return 0, 0, false
	}
	return pid, start, true
}

// osSweep looks for per-adapter cgroups under this host's own cgroup (where Start puts
// them by default) and removes those whose host is gone: its pid is not running, or
// runs a process with another start time (the pid was reused).
// The cgroup v1 fallback's cgroups (memory, pids) are swept the same way after the v2
// ones; v1 has no cgroup.kill, so their members are signalled until none is listed.
func osSweep(ctx context.Context, log hclog.Logger) (SweepReport, error) {
	var rep SweepReport
	parent, err := ownCgroupDir()
	if err == nil {
		err = sweepDir(ctx, log, parent, false, &rep)
	}
	v1swept := false
	for _, controller := range []string{"memory", "pids"} {
		dir, verr := ownV1Dir(controller)
		if verr != nil {
			continue // no such hierarchy: nothing of the fallback can be there
		}
		if verr = sweepDir(ctx, log, dir, true, &rep); verr != nil {
			err = errors.Join(err, verr)
		} else {
			v1swept = true
		}
	}
	if v1swept && errors.Is(err, errNoCgroup2) {
		err = nil // a v1-only system: what there was got swept
	}
	return rep, err
}

func sweepDir(ctx context.Context, log hclog.Logger, parent string, v1 bool, rep *SweepReport) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		pid, start, ok := parseCgroupName(e.Name())
		if !ok || sameProcess(pid, start) {
			continue // not ours, or its host is alive (this one included)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		cg := &cgroup{path: filepath.Join(parent, e.Name()), v1: v1}
		item := SweptItem{Path: cg.path, HostPid: pid, Pids: cg.pids()}
		item.Err = sweepOne(ctx, cg)
		if item.Err != nil {
			log.Warn("could not sweep leftover adapter cgroup", "path", cg.path, "error", item.Err)
			rep.Failed = append(rep.Failed, item)
			continue
		}
		log.Info("swept leftover adapter cgroup", "path", cg.path, "host_pid", pid, "pids", item.Pids)
		rep.Swept = append(rep.Swept, item)
	}
	return nil
}

// sweepOne kills, proves empty and removes one leftover cgroup. Every host on the
// machine sweeps the same parent, so another sweeper may be working on the same
// leftover at the same time and remove it first: its files then vanish under this one
// (ENOENT on cgroup.kill, cgroup.events or rmdir; ENODEV while the kernel is tearing
// the directory down). A leftover that is gone is what a sweep is for, whoever removed
// it, so it counts as swept, never as failed — otherwise two hosts would turn each
// other's health degraded.
func sweepOne(ctx context.Context, cg *cgroup) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = sweepSteps(ctx, cg)
		if err == nil || cgroupGone(cg.path) {
			return nil
		}
		if attempt >= 3 || !vanishing(err) || ctx.Err() != nil {
			return err
		}
		// Its files went away but the directory is still listed: the removal by the
		// other sweeper is in progress. Look again in a moment.
		sleepUntil(ctx, time.Now().Add(time.Duration(attempt+1)*10*time.Millisecond))
	}
}

func sweepSteps(ctx context.Context, cg *cgroup) error {
	if err := cg.kill(); err != nil {
		return err
	}
	if err := cg.waitEmpty(ctx); err != nil {
		return errors.Join(&UnverifiedError{Mechanism: MechCgroup, Pids: cg.pids(), Reason: "leftover cgroup not proven empty"}, err)
	}
	if err := cg.remove(); err != nil {
		return err
	}
	if !cgroupGone(cg.path) {
		// remove stops early when a sub-cgroup vanishes under its walk.
		return &os.PathError{Op: "rmdir", Path: cg.path, Err: errStillThere}
	}
	return nil
}

var errStillThere = errors.New("directory still there after removing it")

// cgroupGone reports whether the cgroup directory no longer exists.
func cgroupGone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// vanishing reports whether err is what a cgroup being removed by someone else gives.
func vanishing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) || errors.Is(err, errStillThere)
}
