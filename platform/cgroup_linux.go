package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
)

// cgroupPrefix starts the name of every per-adapter cgroup:
// adapterkit-<host pid>-<host start time in clock ticks>-<sequence>. The start time makes
// the host's identity survive pid reuse, which Sweep relies on.
const cgroupPrefix = "adapterkit-"

var errNoCgroup2 = cgroupfs.ErrNoCgroup2

// ownCgroupDir is the filesystem directory of this process's cgroup v2.
func ownCgroupDir() (string, error) { return cgroupfs.Dir("self") }

// cgroup is one per-adapter cgroup directory.
type cgroup struct {
	path     string
	v1       bool  // a cgroup v1 directory: no cgroup.events, no cgroup.kill
	memLimit bool  // memory.max was applied
	limitErr error // *LimitError for the Resources that could not be applied
}

// newCgroup creates <parent>/adapterkit-<pid>-<start>-<seq> and applies res where the
// controllers exist; the limits it could not apply are recorded in limitErr.
func newCgroup(parent string, seq uint64, res Resources) (*cgroup, error) {
	name, err := cgroupName(seq)
	if err != nil {
		return nil, err
	}
	c := &cgroup{path: filepath.Join(parent, name)}
	if err := os.Mkdir(c.path, 0o755); err != nil {
		return nil, err
	}
	var missing []string
	var reasons []string
	apply := func(limit, file, value string) {
		err := writeExisting(filepath.Join(c.path, file), value)
		if err != nil {
			missing = append(missing, limit)
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%s: controller not enabled in %s/cgroup.subtree_control", file, parent)
			}
			reasons = append(reasons, err.Error())
		}
	}
	if res.MemoryBytes > 0 {
		apply("memory", "memory.max", strconv.FormatInt(res.MemoryBytes, 10))
		c.memLimit = len(missing) == 0
	}
	if res.MaxProcesses > 0 {
		apply("processes", "pids.max", strconv.Itoa(res.MaxProcesses))
	}
	if len(missing) > 0 {
		c.limitErr = &LimitError{Limits: missing, Reason: strings.Join(reasons, "; ")}
	}
	return c, nil
}

// cgroupName is the name of a per-adapter cgroup: adapterkit-<pid>-<start>-<seq>.
// The pid and start time are this host's as /proc names it (see self).
func cgroupName(seq uint64) (string, error) {
	me, err := selfID()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%d-%d-%d", cgroupPrefix, me.pid, me.start, seq), nil
}

func (c *cgroup) file(name string) string { return filepath.Join(c.path, name) }

// kill kills every process of the cgroup and its sub-cgroups.
func (c *cgroup) kill() error {
	err := writeExisting(c.file("cgroup.kill"), "1")
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(c.path); serr != nil {
			return nil // already removed: nothing left to kill
		}
		// Kernels before 5.14 have no cgroup.kill: signal every member, a few rounds
		// to catch processes forked meanwhile; Verify proves the outcome.
		for range 8 {
			pids := c.pids()
			if len(pids) == 0 {
				return nil
			}
			for _, p := range pids {
				_ = unix.Kill(p, unix.SIGKILL)
			}
		}
		return nil
	}
	return err
}

// populated reads "populated" from cgroup.events (covers the whole subtree); a v1
// cgroup is populated while it or a sub-cgroup lists a process.
func (c *cgroup) populated() (bool, error) {
	if c.v1 {
		return len(c.pids()) > 0, nil
	}
	b, err := readControl(c.file("cgroup.events"))
	if err != nil {
		return false, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("populated ")); ok {
			return string(bytes.TrimSpace(v)) != "0", nil
		}
	}
	return false, errors.New("no populated key in cgroup.events")
}

// waitEmpty returns nil once the cgroup is proven empty, or ctx's error. It wakes on
// inotify events of cgroup.events, and polls with backoff as well.
func (c *cgroup) waitEmpty(ctx context.Context) error {
	// The common case — the tree already ended — is answered without an inotify
	// instance, whose teardown costs the kernel milliseconds.
	if pop, err := c.populated(); err != nil || !pop {
		return err
	}
	var notify *os.File
	if fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK); err == nil {
		notify = os.NewFile(uintptr(fd), "inotify")
		defer notify.Close()
		if _, err := unix.InotifyAddWatch(fd, c.file("cgroup.events"), unix.IN_MODIFY); err != nil {
			notify.Close()
			notify = nil
		}
	}
	buf := make([]byte, 4096)
	backoff := time.Millisecond
	for {
		pop, err := c.populated()
		if err != nil {
			return err
		}
		if !pop {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		wake := time.Now().Add(backoff)
		if d, ok := ctx.Deadline(); ok && d.Before(wake) {
			wake = d
		}
		if notify == nil || notify.SetReadDeadline(wake) != nil {
			sleepUntil(ctx, wake)
		} else {
			_, _ = notify.Read(buf) // an event or the deadline: re-read cgroup.events
		}
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

// pids lists the processes of the cgroup and its sub-cgroups.
func (c *cgroup) pids() []int {
	var out []int
	_ = filepath.WalkDir(c.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := readControl(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}

// remove deletes the cgroup and any sub-cgroups the adapter made, deepest first. A
// cgroup that is already gone is not an error; a populated one fails with EBUSY.
func (c *cgroup) remove() error {
	var dirs []string
	err := filepath.WalkDir(c.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := unix.Rmdir(dirs[i]); err != nil && err != syscall.ENOENT {
			return &os.PathError{Op: "rmdir", Path: dirs[i], Err: err}
		}
	}
	return nil
}

// openDir opens the cgroup directory for clone3's CLONE_INTO_CGROUP (close-on-exec).
func (c *cgroup) openDir() (*os.File, error) {
	fd, err := unix.Open(c.path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: c.path, Err: err}
	}
	return os.NewFile(uintptr(fd), c.path), nil
}
