package platform

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
)

// A per-adapter cgroup proves the end of a tree by reading "populated 0" only if no
// process of the tree can have left it. cgroup v2 lets a process move a process (itself
// or one it may signal) from cgroup S to cgroup D, by writing its pid to D's
// cgroup.procs or by clone3 with CLONE_INTO_CGROUP, when it may write the cgroup.procs
// of D and of the nearest common ancestor of S and D. For a destination inside the
// adapter's own cgroup that ancestor lies inside it too: the adapter of a host that
// created the cgroup with its own uid may write the cgroup's cgroup.procs and create
// sub-cgroups there, but whatever it moves stays in the subtree that "populated"
// covers. For a destination outside, the common ancestor is a strict ancestor of the
// adapter's cgroup. So the proof holds when the adapter can write the cgroup.procs of
// none of the ancestors, from the cgroup's parent up to the root of the cgroup mount
// (a cgroup namespace's root: the kernel refuses moves that leave it). Two cases
// decide that soundly at start:
//
//   - a sandboxed adapter under Landlock and seccomp, none of whose write grants reach
//     a cgroup v2 file system: Landlock refuses it every cgroup.procs for writing, and
//     seccomp refuses clone3 (ENOSYS), the only way to CLONE_INTO_CGROUP;
//   - otherwise the adapter runs with the host's credentials, so the host's effective
//     access (faccessat with AT_EACCESS: uid, groups and capabilities) to each
//     ancestor's cgroup.procs decides. A root host (CAP_DAC_OVERRIDE) may write them
//     all; a host whose adapter cgroups are made under its own cgroup may always write
//     that one's (cgroupParent requires it), so an adapter outside the sandbox never
//     gets the proof from its cgroup alone.
//
// An adapter that executes a set-user-ID or file-capability program gains that
// program's rights for it; the check cannot foresee what such a program writes.

// cgroupNoProof returns "" when the cgroup cg (not a PID namespace) proves the end of
// the tree started with plan (nil: no sandbox), else why it does not.
func cgroupNoProof(cfg *Config, cg *cgroup, plan *sandboxPlan) string {
	if plan != nil && plan.mech.Has(MechLandlock|MechSeccomp) {
		if !writeGrantOnCgroupFS(cfg, plan) {
			return ""
		}
	}
	for dir := filepath.Dir(cg.path); ; dir = filepath.Dir(dir) {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			return "the ancestors of cgroup " + cg.path + " could not be checked: " + err.Error()
		}
		if st.Type != unix.CGROUP2_SUPER_MAGIC {
			return "" // above the mount root
		}
		procs := filepath.Join(dir, "cgroup.procs")
		if err := unix.Faccessat(unix.AT_FDCWD, procs, unix.W_OK, unix.AT_EACCESS); err == nil || !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EROFS) {
			why := "the adapter's user may write " + procs
			if err != nil {
				why = "whether the adapter's user may write " + procs + " is unknown (" + err.Error() + ")"
			}
			return why + ", an ancestor of its cgroup: a process it moved there cannot be seen"
		}
		if dir == "/" {
			return ""
		}
	}
}

// writeGrantOnCgroupFS reports whether a write grant of the sandbox reaches a cgroup v2
// file system (lies inside one, or is a directory above a mount of one), or whether the
// mounts cannot be read.
func writeGrantOnCgroupFS(cfg *Config, plan *sandboxPlan) bool {
	mounts := cgroup2Mounts()
	if mounts == nil {
		return true // unknown: assume the worst
	}
	for _, w := range append([]string{plan.tmp}, cfg.Sandbox.Write...) {
		p, err := filepath.EvalSymlinks(w)
		if err != nil {
			p = filepath.Clean(w)
		}
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return true
		}
		for _, m := range mounts {
			if p == "/" || m == p || strings.HasPrefix(m, p+"/") {
				return true
			}
		}
	}
	return false
}

// cgroup2Mounts lists the mount points of cgroup v2 file systems in this process's
// mount namespace, nil when they cannot be read.
func cgroup2Mounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	out := []string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		out = append(out, cgroupfs.Unescape(fields[4]))
	}
	if sc.Err() != nil {
		return nil
	}
	return out
}
