package platform

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Every Start decides its mechanisms afresh: nothing learned from an earlier start is
// remembered, so a transient failure (EAGAIN, ENOMEM, a cgroup removed meanwhile)
// weakens that one adapter only, and the report says so. The probes are cheap: a
// capability read with capget(2), an access(2) on the cgroup directory, and a
// clone that the kernel refuses before creating anything.

// attempt is one combination of mechanisms to try, strongest first.
type attempt struct{ cgroup, pidns, userns bool }

// nsChoice is one way to get a PID namespace: directly (privileged) or inside a new
// user namespace.
type nsChoice struct{ userns bool }

// choice collects, for one Start, the attempts to make and why mechanisms are dropped.
type choice struct {
	wantCgroup bool   // the host did not turn cgroups off
	cgroupWhy  string // why no cgroup was prepared ("" when one was)
	ns         []nsChoice
	nsWhy      string // why no PID namespace is tried at all ("" when one is)
	nsUser     bool   // the PID namespace needs a user namespace (unprivileged host)
	errs       map[attempt]error
}

// attemptHook, when set (tests), runs before each attempt's clone; an error it returns
// stands for what the kernel would have returned.
var attemptHook func(attempt) error

// newChoice decides what to try for cfg. A host with CAP_SYS_ADMIN creates a PID
// namespace directly, falling back to a user namespace; one without goes straight to a
// user namespace with an identity mapping, unless Isolation turns that off.
func newChoice(cfg *Config) *choice {
	c := &choice{errs: make(map[attempt]error)}
	c.wantCgroup = cfg.Isolation != IsolationProcessGroup
	if !c.wantCgroup {
		c.cgroupWhy = "turned off by Config.Isolation (IsolationProcessGroup)"
	}
	switch {
	case cfg.Isolation == IsolationProcessGroup:
		c.nsWhy = "turned off by Config.Isolation (IsolationProcessGroup)"
	case cfg.Isolation == IsolationNoPIDNamespace:
		c.nsWhy = "turned off by Config.Isolation (IsolationNoPIDNamespace)"
	case hasCapSysAdmin():
		c.ns = []nsChoice{{}}
		if cfg.Isolation != IsolationNoUserNamespace {
			c.ns = append(c.ns, nsChoice{userns: true})
			if cfg.Sandbox != nil {
				// A sandboxed adapter of a root host is not root over the host's
				// resources: in its own user namespace its capabilities stop there.
				c.ns[0], c.ns[1] = c.ns[1], c.ns[0]
			}
		}
	case cfg.Isolation == IsolationNoUserNamespace:
		c.nsWhy = "the host lacks CAP_SYS_ADMIN and Config.Isolation (IsolationNoUserNamespace) turned off the user namespace that would give one without it"
	default:
		c.ns, c.nsUser = []nsChoice{{userns: true}}, true
	}
	return c
}

// attempts lists the combinations to try, strongest first: cgroup with a PID namespace,
// cgroup alone, PID namespace alone, neither.
func (c *choice) attempts(haveCgroup bool) []attempt {
	var out []attempt
	if haveCgroup {
		for _, n := range c.ns {
			out = append(out, attempt{cgroup: true, pidns: true, userns: n.userns})
		}
		out = append(out, attempt{cgroup: true})
	}
	for _, n := range c.ns {
		out = append(out, attempt{pidns: true, userns: n.userns})
	}
	return append(out, attempt{})
}

// failed records why an attempt did not start.
func (c *choice) failed(a attempt, err error) {
	if a.userns {
		err = explainUserNS(err)
	}
	c.errs[a] = err
}

// lastErr is the error of the last failed attempt matching want (nil: none failed).
func (c *choice) lastErr(atts []attempt, want func(attempt) bool) error {
	var last error
	for _, a := range atts {
		if err, ok := c.errs[a]; ok && want(a) {
			last = err
		}
	}
	return last
}

// supervision is the report for a tree started by used after atts were tried.
func (c *choice) supervision(mech Mechanism, used attempt, atts []attempt) Supervision {
	s := Supervision{Mechanism: mech}
	if !used.cgroup {
		why := c.cgroupWhy
		if why == "" {
			if err := c.lastErr(atts, func(a attempt) bool { return a.cgroup }); err != nil {
				why = "starting the adapter in its cgroup failed: " + err.Error()
			}
		}
		if why != "" {
			s.Dropped = append(s.Dropped, Dropped{Mechanism: MechCgroup, Reason: why})
		}
	}
	if !used.pidns {
		m, why := MechPidNamespace, c.nsWhy
		if c.nsUser {
			m |= MechUserNamespace
		}
		if why == "" {
			err := c.lastErr(atts, func(a attempt) bool { return a.pidns })
			switch {
			case err == nil:
				why = "not tried"
			case c.nsUser:
				why = "the host lacks CAP_SYS_ADMIN, and creating a user namespace with a PID namespace failed: " + err.Error()
			default:
				why = "creating a PID namespace failed: " + err.Error()
			}
		}
		s.Dropped = append(s.Dropped, Dropped{Mechanism: m, Reason: why})
	}
	return s
}

// nsAttr adds the namespaces of a to sys. The user namespace maps the host's effective
// uid and gid to themselves (one id each), so the adapter keeps its identity and file
// access; every other id, the host user's supplementary groups included, shows as the
// overflow id (65534) inside, and setgroups(2) is denied there, as an unprivileged
// mapping of the gid requires.
func nsAttr(sys *syscall.SysProcAttr, a attempt) {
	if a.pidns {
		sys.Cloneflags |= syscall.CLONE_NEWPID
	}
	if a.userns {
		uid, gid := os.Geteuid(), os.Getegid()
		sys.Cloneflags |= syscall.CLONE_NEWUSER
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = false
	}
}

// explainUserNS adds to a refused user namespace the system setting that refuses it.
func explainUserNS(err error) error {
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOSPC) &&
		!errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	var notes []string
	for _, s := range []struct{ file, name, bad string }{
		{"/proc/sys/user/max_user_namespaces", "user.max_user_namespaces", "0"},
		{"/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone", "0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns", "1"},
	} {
		if b, rerr := os.ReadFile(s.file); rerr == nil && strings.TrimSpace(string(b)) == s.bad {
			notes = append(notes, s.name+" = "+s.bad)
		}
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(notes, ", "))
}

// cgroupParent finds the cgroup v2 directory under which this host may create
// per-adapter cgroups: Config.CgroupParent, or else the host's own cgroup. It must be a
// directory the host may write (root, or a subtree delegated to the host's uid: a
// systemd unit with Delegate=yes, a user service under user@.service, a container with
// its own cgroup namespace) with a cgroup.procs the host may write, which moving a new
// process into a child cgroup requires.
func cgroupParent(cfg *Config) (string, error) {
	parent := cfg.CgroupParent
	if parent == "" {
		var err error
		if parent, err = ownCgroupDir(); err != nil {
			return "", err
		}
	}
	if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
		return "", fmt.Errorf("cgroup %s is not writable by uid %d (%w): no delegated cgroup v2 subtree (systemd Delegate=yes, or a container's cgroup namespace, gives one)", parent, os.Geteuid(), err)
	}
	procs := parent + "/cgroup.procs"
	if err := unix.Access(procs, unix.W_OK); err != nil {
		return "", fmt.Errorf("%s is not writable by uid %d (%w): the cgroup is not delegated to the host", procs, os.Geteuid(), err)
	}
	return parent, nil
}
