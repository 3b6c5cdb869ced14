package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// launcherExe is what a sandboxed start executes first: the host's own binary, which
// becomes the launcher stage (launcher_linux.go) and then the adapter.
const launcherExe = "/proc/self/exe"

// launchStatusMax bounds what the host reads from the status pipe.
const launchStatusMax = 4096

// startLaunched starts a sandboxed adapter: the spawner thread (unrestricted, so the
// host keeps its parent-death signal and cgroup v1 semantics) forks the launcher with
// the attempt's namespaces and cgroup; the launcher applies plan to itself and executes
// the adapter. It returns once the adapter is executing, or with the launcher's
// *SandboxError, the launcher reaped. exe and attr are what an unsandboxed start would
// execute (attr.Files holds the adapter's descriptors, with a pinned script's as fd 3).
func startLaunched(ctx context.Context, cfg *Config, plan *sandboxPlan, v1 *v1Limits, exe string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	var exeFile *os.File
	if cfg.pin != nil && cfg.pin.sealed && cfg.pin.child == nil {
		// A pinned native executable: the host's close-on-exec descriptor does not
		// survive the launcher's own exec, so it is passed as fd 7.
		exeFile, exe = cfg.pin.extra, "/proc/self/fd/"+strconv.Itoa(launchFdExe)
	}
	script := len(attr.Files) > launchFdScript
	spec, err := plan.specFile(&launchSpec{path: exe, argv: argv, env: plan.env, filter: plan.filter,
		rules: plan.rulesFile != nil, script: script})
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the launcher's status pipe: %w", err)
	}
	defer r.Close()
	files := append([]*os.File(nil), attr.Files...)
	for len(files) < launchFdSpec {
		files = append(files, nil)
	}
	files = append(files, spec, plan.rulesFile, w, exeFile)
	lattr := *attr
	lattr.Files = files
	// The launcher's own environment: only what keeps its runtime small (it executes
	// the adapter with the adapter's environment from the specification).
	lattr.Env = []string{"GOMAXPROCS=1"}
	proc, err := spawn(ctx, func() (*os.Process, error) {
		protectInheritedFds(cfg)
		return v1.fork(func() (*os.Process, error) {
			return os.StartProcess(launcherExe, []string{launcherArg0, launcherArg1}, &lattr)
		})
	})
	w.Close()
	if err != nil {
		return nil, err
	}
	status, err := readLaunchStatus(ctx, r)
	if err == nil && len(status) == 0 {
		return proc, nil // end of file, nothing written: the exec closed the pipe
	}
	_ = proc.Kill()
	_, _ = proc.Wait()
	spawnReaped()
	if err != nil {
		return nil, err
	}
	return nil, parseLaunchStatus(status)
}

// readLaunchStatus reads the status pipe to its end, or until ctx ends.
func readLaunchStatus(ctx context.Context, r *os.File) ([]byte, error) {
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(r, launchStatusMax))
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the launcher's status: %w", err)
	}
	return b, nil
}

// specFile writes s into a memory file for the launcher (once per plan: every attempt
// of a start passes the same one).
func (p *sandboxPlan) specFile(s *launchSpec) (*os.File, error) {
	if p.spec != nil {
		return p.spec, nil
	}
	fd, err := unix.MemfdCreate("adapterkit-launch", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
	if err == unix.EINVAL {
		fd, err = unix.MemfdCreate("adapterkit-launch", unix.MFD_CLOEXEC) // before Linux 6.3
	}
	if err != nil {
		return nil, fmt.Errorf("creating the launch specification: %w", err)
	}
	f := os.NewFile(uintptr(fd), "adapterkit-launch")
	if _, err := f.Write(encodeLaunch(s)); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the launch specification: %w", err)
	}
	p.spec = f
	return f, nil
}
