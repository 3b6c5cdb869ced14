package platform

import "golang.org/x/sys/unix"

// argRule is a system call the seccomp filter lets through only with some arguments;
// emit appends its checks, which end in a jump to "allow", "deny" or "nosys" (or a
// return), never by falling through.
type argRule struct {
	nr   uintptr
	name string
	emit func(a *bpfAsm)
}

// Constants of the argument checks that golang.org/x/sys does not name.
const (
	modeSetID       = unix.S_ISUID | unix.S_ISGID               // 06000
	oTmpfileBit     = unix.O_TMPFILE &^ unix.O_DIRECTORY        // __O_TMPFILE
	oCreates        = unix.O_CREAT | oTmpfileBit                // flags that make open create
	ioprioWhoProc   = 1                                         // IOPRIO_WHO_PROCESS
	fsIOC32SetFlags = 0x40046602                                // FS_IOC32_SETFLAGS
	fsIOCFSSetXattr = 0x401c5820                                // FS_IOC_FSSETXATTR (struct fsxattr)
	sockTypeMask    = 0xf                                       // SOCK_TYPE_MASK: without SOCK_NONBLOCK/SOCK_CLOEXEC
	ioctlSetFlags   = uint32(unix.FS_IOC_SETFLAGS & 0xffffffff) // FS_IOC_SETFLAGS (chattr)
	// cloneNewNS are clone's flags that create namespaces (CLONE_NEWNS, NEWCGROUP,
	// NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; CLONE_NEWTIME is clone3's and unshare's).
	cloneNewNS = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
)

// argOff is the offset of the low 32 bits of args[i] in struct seccomp_data (both
// supported architectures are little endian).
func argOff(i int) uint32 { return seccompArg + 8*uint32(i) }

// selfOnly allows the call only when argument i (a pid) is 0, the caller itself.
func selfOnly(i int) func(a *bpfAsm) {
	return func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(i))
		a.jump(bpfJeq, 0, "allow", "deny")
	}
}

// whoSelf allows the call only when argument 0 is which and argument 1 is 0: the
// calling process itself (setpriority, ioprio_set).
func whoSelf(which uint32) func(a *bpfAsm) {
	return func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(0))
		a.jump(bpfJeq, which, "", "deny")
		a.stmt(bpfLdAbsW, argOff(1))
		a.jump(bpfJeq, 0, "allow", "deny")
	}
}

// noSetID refuses a mode (argument i) with the set-user-ID or set-group-ID bit.
func noSetID(i int) func(a *bpfAsm) {
	return func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(i))
		a.jump(bpfJset, modeSetID, "deny", "allow")
	}
}

// createNoSetID refuses an open whose flags (argument flags) create a file and whose
// mode (argument mode) has the set-user-ID or set-group-ID bit; the mode of an open
// that creates nothing is ignored by the kernel, and so here.
func createNoSetID(flags, mode int) func(a *bpfAsm) {
	return func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(flags))
		a.jump(bpfJset, oCreates, "", "allow")
		noSetID(mode)(a)
	}
}

// noSys answers ENOSYS: for a call whose arguments seccomp cannot read (openat2 passes
// its flags and mode in a structure), so that the caller falls back to one it can.
func noSys(a *bpfAsm) { a.stmt(bpfRet, retNoSys) }

// noAttrIoctl refuses the ioctls that set a file's inode flags or extended attributes
// (chattr: append-only, immutable, no-dump, project id), and the two that act on a
// terminal as if someone typed or selected on it: TIOCSTI (push characters into a
// terminal's input, which the shell behind it then reads and runs once the host ends)
// and TIOCLINUX (the console's selection, pasted the same way). Every other ioctl
// passes. The command is compared in its low 32 bits, as the kernel reads it.
func noAttrIoctl(a *bpfAsm) {
	a.stmt(bpfLdAbsW, argOff(1))
	a.jump(bpfJeq, unix.TIOCSTI, "deny", "")
	a.jump(bpfJeq, unix.TIOCLINUX, "deny", "")
	a.jump(bpfJeq, ioctlSetFlags, "deny", "")
	a.jump(bpfJeq, fsIOC32SetFlags, "deny", "")
	a.jump(bpfJeq, fsIOCFSSetXattr, "deny", "allow")
}

// commonArgRules are the argument checks present on every architecture.
var commonArgRules = []argRule{
	{unix.SYS_OPENAT, "openat", createNoSetID(2, 3)},
	{unix.SYS_OPENAT2, "openat2", noSys},
	{unix.SYS_MKDIRAT, "mkdirat", noSetID(2)},
	{unix.SYS_MKNODAT, "mknodat", noSetID(2)},
	{unix.SYS_IOCTL, "ioctl", noAttrIoctl},
	{unix.SYS_PRLIMIT64, "prlimit64", selfOnly(0)},
	{unix.SYS_SCHED_SETAFFINITY, "sched_setaffinity", selfOnly(0)},
	{unix.SYS_SCHED_SETPARAM, "sched_setparam", selfOnly(0)},
	{unix.SYS_SCHED_SETSCHEDULER, "sched_setscheduler", selfOnly(0)},
	{unix.SYS_SCHED_SETATTR, "sched_setattr", selfOnly(0)},
	{unix.SYS_MIGRATE_PAGES, "migrate_pages", selfOnly(0)},
	{unix.SYS_MOVE_PAGES, "move_pages", selfOnly(0)},
	{unix.SYS_SETPRIORITY, "setpriority", whoSelf(unix.PRIO_PROCESS)},
	{unix.SYS_IOPRIO_SET, "ioprio_set", whoSelf(ioprioWhoProc)},
	// A child in namespaces of its own: in a new user namespace it holds every
	// capability there (the kernel's attack surface behind them, e.g. a network
	// namespace it administers). A child of the adapter's parent (CLONE_PARENT): the
	// host's child, not the adapter's, so outside the adapter's tree wherever the tree is
	// a process group and its descendants (no cgroup), free to outlive it. clone3
	// passes its flags in a structure, so it gets ENOSYS, which the C libraries answer
	// by using clone.
	{unix.SYS_CLONE, "clone", func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(0)) // flags, on amd64 and arm64 alike
		a.jump(bpfJset, cloneNewNS|unix.CLONE_PARENT, "deny", "allow")
	}},
	{unix.SYS_CLONE3, "clone3", noSys},
	// A lease (F_SETLEASE) makes whoever opens the file for writing wait for the adapter
	// (the kernel's lease-break-time); an adapter of a root host owns, and so may lease,
	// every root-owned file it may read. Every other fcntl passes.
	{unix.SYS_FCNTL, "fcntl", func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(1)) // cmd
		a.jump(bpfJeq, unix.F_SETLEASE, "deny", "allow")
	}},
	{unix.SYS_MEMFD_CREATE, "memfd_create", func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(1)) // flags
		a.jump(bpfJset, unix.MFD_NOEXEC_SEAL, "allow", "deny")
	}},
}

// socketRules are the checks of socket(2) and socketpair(2) under s (none with Network).
func socketRules(s *Sandbox) []argRule {
	if s.Network {
		return nil
	}
	rules := []argRule{{unix.SYS_SOCKET, "socket", func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(0)) // domain
		unixTo := "deny"
		if s.UnixSockets {
			unixTo = "allow"
		}
		if len(s.ConnectPorts) == 0 {
			a.jump(bpfJeq, unix.AF_UNIX, unixTo, "deny")
			return
		}
		a.jump(bpfJeq, unix.AF_UNIX, unixTo, "")
		a.jump(bpfJeq, unix.AF_INET, "tcp", "")
		a.jump(bpfJeq, unix.AF_INET6, "tcp", "deny")
		a.label("tcp")
		a.stmt(bpfLdAbsW, argOff(1)) // type, with SOCK_NONBLOCK/SOCK_CLOEXEC
		a.stmt(bpfAnd, sockTypeMask)
		a.jump(bpfJeq, unix.SOCK_STREAM, "", "deny")
		a.stmt(bpfLdAbsW, argOff(2)) // protocol
		a.jump(bpfJeq, 0, "allow", "")
		a.jump(bpfJeq, unix.IPPROTO_TCP, "allow", "deny")
	}}}
	// socketpair: AF_UNIX only (AF_TIPC has pairs too); without UnixSockets a stream
	// pair only, as a connected stream socket cannot be re-addressed.
	return append(rules, argRule{unix.SYS_SOCKETPAIR, "socketpair", func(a *bpfAsm) {
		a.stmt(bpfLdAbsW, argOff(0))
		if s.UnixSockets {
			a.jump(bpfJeq, unix.AF_UNIX, "allow", "deny")
			return
		}
		a.jump(bpfJeq, unix.AF_UNIX, "", "deny")
		a.stmt(bpfLdAbsW, argOff(1))
		a.stmt(bpfAnd, sockTypeMask)
		a.jump(bpfJeq, unix.SOCK_STREAM, "allow", "deny")
	}})
}

// listenDenied reports whether s refuses listen(2) outright: unless the whole network
// is granted, or only Unix sockets can be created (UnixSockets without ConnectPorts).
// A TCP socket can listen without bind (the kernel then binds a port on every address,
// which Landlock does not see), and seccomp cannot tell a Unix socket's descriptor from
// a TCP one's.
func listenDenied(s *Sandbox) bool {
	return !s.Network && !(s.UnixSockets && len(s.ConnectPorts) == 0)
}

// argRules lists every argument check of the filter for s.
func argRules(s *Sandbox) []argRule {
	rules := append(append(append([]argRule(nil), commonArgRules...), archArgRules...), socketRules(s)...)
	return rules
}
