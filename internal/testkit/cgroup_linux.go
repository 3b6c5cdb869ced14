package testkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
)

// Every adapterkit host sweeps the per-adapter cgroups (adapterkit-<pid>-...) directly
// under its own cgroup, and all hosts of a machine usually share that parent. A test
// that asserts what a sweep found, or that a dead host's descendants wait for a sweep,
// runs its hosts in a private cgroup instead: a directory under the test's cgroup whose
// name no sweep parses, so no other host on the machine looks inside it.

// PrivateCgroup makes such a cgroup v2 directory and removes it at cleanup, after
// killing whatever still runs in it (all of it the test's). It returns "" when not
// root (no cgroup may be created); as root it fails t when none can be made, so a
// machine with the mechanism never quietly skips what depends on it.
func PrivateCgroup(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	own, err := ownCgroup2()
	if err != nil {
		t.Fatalf("private cgroup: %v", err)
	}
	dir := filepath.Join(own, fmt.Sprintf("aktest-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("private cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := removeCgroup(dir); err != nil {
			t.Errorf("removing private cgroup: %v", err)
		}
	})
	return dir
}

// InCgroup makes cmd start inside the cgroup v2 directory dir (dir "" leaves cmd
// alone). Call the returned function once cmd has started.
func InCgroup(t testing.TB, cmd *exec.Cmd, dir string) (started func()) {
	t.Helper()
	if dir == "" {
		return func() {}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open cgroup %s: %v", dir, err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = fd
	return func() { unix.Close(fd) }
}

// CgroupOf is the cgroup v2 directory of process pid, read from /proc.
func CgroupOf(pid int) (string, error) { return cgroupfs.Dir(strconv.Itoa(pid)) }

func ownCgroup2() (string, error) { return CgroupOf(os.Getpid()) }

// removeCgroup kills everything in dir's subtree, waits until it is empty, and
// removes its directories deepest first.
func removeCgroup(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return err
	}
	var err error
	if !Within(30*time.Second, func() bool {
		var b []byte
		b, err = os.ReadFile(filepath.Join(dir, "cgroup.events"))
		return err != nil || strings.Contains(string(b), "populated 0")
	}) {
		return errors.New(dir + " still populated 30 s after cgroup.kill")
	}
	if err != nil {
		return err
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := unix.Rmdir(dirs[i]); err != nil && err != unix.ENOENT {
			return &os.PathError{Op: "rmdir", Path: dirs[i], Err: err}
		}
	}
	return nil
}
