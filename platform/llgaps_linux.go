package platform

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// What each Landlock ABI adds (Documentation/userspace-api/landlock.rst), and so what a
// sandbox loses on an older kernel:
//
//	1  Linux 5.13  the filesystem rights: read, write, execute, make and remove entries
//	2  Linux 5.19  REFER: linking and renaming into another directory
//	3  Linux 6.2   TRUNCATE: truncate(2), ftruncate(2), creat(2), open(2) with O_TRUNC
//	4  Linux 6.7   TCP bind and connect by port
//	5  Linux 6.10  IOCTL_DEV: ioctl(2) on character and block devices
//	6  Linux 6.12  scopes: signals and abstract Unix sockets
//	7  Linux 6.15  audit logging of denials: nothing more to enforce
//
// A right the ruleset does not handle is allowed everywhere, except REFER: below ABI 2
// the kernel refuses every change of a file's parent directory.

// landlockGaps lists every part of the policy s that Landlock of version abi cannot
// enforce, one Dropped of MechLandlock each, in the order of the ABI that closes it.
// Without Sandbox.BestEffort each refuses the start; with it each is reported.
func landlockGaps(abi int, s *Sandbox) []Dropped {
	var gaps []string
	if abi < 2 {
		gaps = append(gaps, fmt.Sprintf("Landlock ABI %d has no REFER right (ABI 2, Linux 5.19): "+
			"linking or renaming a file into another directory is refused (EXDEV), inside the write grants too "+
			"(stricter than the policy: nothing outside it is exposed)", abi))
	}
	if abi < 3 {
		gaps = append(gaps, fmt.Sprintf("Landlock ABI %d has no TRUNCATE right (ABI 3, Linux 6.2): "+
			"truncate(2) empties any file the adapter's user may write, outside the grants too, "+
			"and open(2) with O_TRUNC one granted for reading only", abi))
	}
	if abi < 4 && !s.Network && len(s.ConnectPorts) > 0 {
		gaps = append(gaps, fmt.Sprintf("Landlock ABI %d has no TCP rights (ABI 4, Linux 6.7): "+
			"the adapter may connect to any TCP port, not only to %s, and bind any "+
			"(the seccomp filter, where in force, still admits TCP sockets only and refuses listen)",
			abi, strings.TrimPrefix(s.netString(), "tcp connect ")))
	}
	if abi < 5 {
		gaps = append(gaps, fmt.Sprintf("Landlock ABI %d has no IOCTL_DEV right (ABI 5, Linux 6.10): "+
			"ioctl(2) on a device the adapter opens (/dev/zero, the random devices, any under a Read or Write grant) "+
			"is not restricted, beyond the few the seccomp filter refuses", abi))
	}
	if abi < 6 {
		what := "signal any process outside its sandbox that its user may signal (the host included, where no PID namespace hides it)"
		if s.Network || s.UnixSockets {
			what += " and connect to abstract Unix sockets outside it"
		}
		gaps = append(gaps, fmt.Sprintf("Landlock ABI %d has no scopes (ABI 6, Linux 6.12): the adapter may %s", abi, what))
	}
	dropped := make([]Dropped, len(gaps))
	for i, g := range gaps {
		dropped[i] = Dropped{Mechanism: MechLandlock, Reason: g}
	}
	return dropped
}

// warnGaps logs, once for this start, each part of the sandbox that is not enforced.
func (p *sandboxPlan) warnGaps(log hclog.Logger, path string) {
	for _, d := range p.dropped {
		log.Warn("sandbox not fully enforced", "path", path, "mechanism", d.Mechanism.String(), "gap", d.Reason)
	}
}
