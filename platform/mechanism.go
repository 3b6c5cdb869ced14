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
	// MechUserNamespace: Linux user namespace with an identity mapping (the adapter keeps
	// the host's uid and gid), created so that a host without CAP_SYS_ADMIN may give the
	// adapter a PID namespace; it always comes with MechPidNamespace. See [Isolation]
	// for what changes for the adapter.
	MechUserNamespace
	// MechSubreaper: Linux PR_SET_CHILD_SUBREAPER on the host (an explicit, process-wide
	// choice: [HostOptions].ChildSubreaper): descendants that leave the adapter's process
	// group and lose their parent are re-parented to the host, where they stay visible
	// and killable. It gives no proof.
	MechSubreaper
	// MechLandlock: Linux Landlock restricts the adapter's files, TCP ports, abstract
	// Unix sockets and signals ([Config].Sandbox).
	MechLandlock
	// MechSeccomp: a Linux seccomp filter refuses the adapter socket families and
	// system calls outside its sandbox ([Config].Sandbox).
	MechSeccomp
	// MechReaper: Linux, a sandboxed adapter with neither cgroup nor PID namespace
	// runs below a reaper: its launcher stage, never sandboxed, stays as its parent and a
	// child subreaper, so every descendant stays below it; the reaper kills and reaps
	// them all once the adapter exits or the host asks, then exits as the adapter did.
	// It gives proof where the adapter can neither signal nor trace its reaper
	// (Landlock's signal scope and the seccomp filter); [Supervision].NoProof says
	// whether one tree's does.
	MechReaper
)

var mechNames = []struct {
	m    Mechanism
	name string
}{
	{MechCgroup, "cgroup"},
	{MechUserNamespace, "userns"},
	{MechPidNamespace, "pidns"},
	{MechProcessGroup, "pgroup"},
	{MechJobObject, "job"},
	{MechParentDeathSignal, "pdeathsig"},
	{MechSubreaper, "subreaper"},
	{MechLandlock, "landlock"},
	{MechSeccomp, "seccomp"},
	{MechReaper, "reaper"},
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

// Proves reports whether m can prove that a whole tree ended: a cgroup, a PID
// namespace, a job object or a reaper can; a process group alone cannot. A cgroup
// without a PID namespace proves it only for an adapter that cannot move processes out
// of it, a reaper only for an adapter that cannot signal or trace it:
// [Supervision].NoProof says whether one tree's can.
func (m Mechanism) Proves() bool {
	return m&(MechCgroup|MechPidNamespace|MechJobObject|MechReaper) != 0
}

// Supervision is what supervises one process tree, decided when it was started, and
// why any stronger mechanism the host did not turn off is not in effect. Nothing of it
// is remembered across starts: every [Start] tries again (see the package doc).
type Supervision struct {
	// Mechanism is the set in effect.
	Mechanism Mechanism
	// Dropped lists the mechanisms that were wanted but are not in effect, strongest
	// first, each with the reason; a mechanism the host turned off (Config.Isolation)
	// is listed with that reason too; so is any part of a best-effort sandbox that could
	// not be enforced. Empty when nothing was dropped.
	Dropped []Dropped
	// Sandbox describes the sandbox in force, e.g. "landlock v7: fs, tcp, scope;
	// seccomp: 100 syscalls denied, 24 checked by argument, sockets none; net none;
	// tasks 512 (default) by pids cgroup v2; inotify refused" (Linux: the process limit
	// and what applied it, see [Resources].MaxProcesses); "" when the adapter was started
	// without one ([Config].Sandbox nil).
	Sandbox string
	// NoProof says why [Tree.Verify] cannot prove the end of this tree, "" when it can
	// (Linux). A PID namespace proves it; a cgroup alone only when the adapter cannot
	// write the cgroup.procs of any ancestor of its cgroup, e.g. "the adapter's user may
	// write /sys/fs/cgroup/cgroup.procs, an ancestor of its cgroup: a process it moved
	// there cannot be seen"; a process group never does.
	NoProof string
	// Derived lists what a sandbox grants beyond its policy because the adapter needs it
	// to run, found at start-up from the executable and the adapter's PATH: "exec P" for
	// an interpreter or dynamic loader, "read D" for an interpreter's installation
	// prefix (see [Sandbox]). Empty without a sandbox.
	Derived []string
}

// Dropped is one mechanism not in effect for a tree, and why.
type Dropped struct {
	// Mechanism is what was not used (e.g. MechCgroup, or MechUserNamespace|MechPidNamespace).
	Mechanism Mechanism
	// Reason says why, e.g. "the host's cgroup /sys/fs/cgroup is not writable by uid
	// 65534 (no delegated subtree)" or "turned off by Config.Isolation".
	Reason string
}

// String is the mechanism set followed by each dropped mechanism and its reason, e.g.
// "userns|pidns|pgroup|pdeathsig (cgroup dropped: ...)".
func (s Supervision) String() string {
	var b strings.Builder
	b.WriteString(s.Mechanism.String())
	if s.Sandbox != "" {
		b.WriteString(" [sandbox " + s.Sandbox)
		if len(s.Derived) > 0 {
			b.WriteString("; derived: " + strings.Join(s.Derived, ", "))
		}
		b.WriteString("]")
	}
	for i, d := range s.Dropped {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(d.Mechanism.String() + " dropped: " + d.Reason)
	}
	if len(s.Dropped) > 0 {
		b.WriteString(")")
	}
	if s.NoProof != "" {
		b.WriteString(" [no proof: " + s.NoProof + "]")
	}
	return b.String()
}
