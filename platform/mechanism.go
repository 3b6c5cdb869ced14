package platform

import "strings"

// Mechanism is the set of operating-system facilities supervising one process tree.
// Several may be combined (e.g. MechCgroup|MechPidNamespace|MechParentDeathSignal).
type Mechanism uint16

const (
	// MechCgroup: Linux cgroup v2 per adapter; killed with cgroup.kill, proven empty by
	// "populated 0" in cgroup.events. Gives proof.
	MechCgroup Mechanism = 1 << iota
	// MechPidNamespace: Linux PID namespace; the adapter is its init, so its death kills
	// every process in the namespace, and reaping it proves they are gone. Gives proof.
	MechPidNamespace
	// MechProcessGroup: the adapter leads its own process group (POSIX). Processes that
	// call setsid or setpgid leave it; alone it cannot give proof on Linux.
	MechProcessGroup
	// MechJobObject: Windows job object with kill-on-close; proof is ActiveProcesses == 0.
	MechJobObject
	// MechParentDeathSignal: Linux PR_SET_PDEATHSIG=SIGKILL on the adapter, from a thread
	// that lives as long as any adapter, so a host that dies takes its adapters with it.
	MechParentDeathSignal
)

var mechNames = []struct {
	m    Mechanism
	name string
}{
	{MechCgroup, "cgroup"},
	{MechPidNamespace, "pidns"},
	{MechProcessGroup, "pgroup"},
	{MechJobObject, "job"},
	{MechParentDeathSignal, "pdeathsig"},
}

// Has reports whether all of o are in m.
func (m Mechanism) Has(o Mechanism) bool { return m&o == o && o != 0 }

// String lists the mechanisms separated by "|", or "none".
func (m Mechanism) String() string {
	var parts []string
	for _, n := range mechNames {
		if m&n.m != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}
