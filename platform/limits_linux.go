package platform

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// The process limit of a sandboxed adapter. The adapter runs as the host's user and
// shares that user's task quota with the host (RLIMIT_NPROC counts every task of the
// real uid; threads-max and pid_max bound everyone), so a sandboxed start without
// Resources.MaxProcesses gets DefaultSandboxMaxProcesses. What applies it, strongest
// first:
//
//   - the tree's pids cgroup, v2 or else v1 (cgroupv1_linux.go): pids.max counts every
//     task of the tree, wherever its descendants go;
//   - RLIMIT_NPROC, set by the launcher stage right before it executes the adapter,
//     when the adapter runs in a user namespace of its own (IsolationAuto without
//     CAP_SYS_ADMIN). The kernel counts RLIMIT_NPROC per user and per user namespace,
//     and checks a fork against the count of the forking task's own namespace first:
//     in the adapter's namespace, whose only tasks are the adapter's tree (the filter
//     refuses setns, unshare and new namespaces), that is the tree's size. The count is
//     also charged to the host's user in the parent namespace, where it is checked
//     against the host's own RLIMIT_NPROC as usual. The limit is set as both soft and
//     hard limit (or left lower, where it already is), so the adapter cannot raise it;
//   - nothing otherwise: outside a namespace of its own, RLIMIT_NPROC would count every
//     task of the host's user, the host's threads and other programs included, so no
//     value of it bounds the adapter's tree; and the kernel exempts the initial
//     namespace's root (uid 0) from RLIMIT_NPROC. Tree.LimitErr then names the
//     "processes" limit, and Supervision.Sandbox says "not applied".
//
// What is protected: the host's user keeps at least its quota minus the host's own use
// minus the adapter's limit. A user quota that the host (or other programs of the user)
// already nearly fills is not protected by a limit of 512: set MaxProcesses lower.

// processLimit is the MaxProcesses a start of c applies on Linux (0: none), and whether
// it is the sandbox default.
func (c *Config) processLimit() (n int, dflt bool) {
	switch {
	case c.Resources.MaxProcesses > 0:
		return c.Resources.MaxProcesses, false
	case c.Resources.MaxProcesses == 0 && c.Sandbox != nil:
		return DefaultSandboxMaxProcesses, true
	}
	return 0, false
}

// nprocByRlimit reports whether a sandboxed start applies its process limit maxProcs
// with RLIMIT_NPROC: no pids cgroup applies it, and the adapter runs in a user
// namespace of its own, not as the initial namespace's root.
func nprocByRlimit(maxProcs int, userns, pidsCgroup bool) bool {
	return maxProcs > 0 && userns && !pidsCgroup && !initialRoot()
}

// initialRoot reports whether this process's real uid is 0 of the initial user
// namespace, which the kernel exempts from RLIMIT_NPROC (an identity mapping keeps it
// 0 in the adapter's namespace).
func initialRoot() bool {
	if os.Getuid() != 0 {
		return false
	}
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true // cannot tell: assume the exemption, so that the gap is reported
	}
	return slices.Equal(strings.Fields(string(b)), []string{"0", "0", "4294967295"})
}

// processLimitDesc describes a sandboxed tree's process limit for Supervision.Sandbox:
// "tasks 512 (default) by pids cgroup v1", "tasks unlimited (MaxProcesses < 0)",
// "tasks 512 (default) not applied".
func processLimitDesc(maxProcs int, dflt bool, by string) string {
	if maxProcs <= 0 {
		return "tasks unlimited (Resources.MaxProcesses < 0)"
	}
	d := "tasks " + strconv.Itoa(maxProcs)
	if dflt {
		d += " (default)"
	}
	if by == "" {
		return d + " not applied"
	}
	return d + " by " + by
}

// inotifyDesc describes the inotify grant for Supervision.Sandbox.
func inotifyDesc(s *Sandbox) string {
	if s.Inotify {
		return "inotify allowed"
	}
	return "inotify refused"
}
