package platform

import "golang.org/x/sys/unix"

// auditArch is AUDIT_ARCH_X86_64: the filter refuses to run a process of another ABI.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the x32 ABI's system call numbers, which would otherwise pass the
// comparisons by number.
const x32Bit = 0x40000000

// archDenied are amd64's legacy and port-I/O system calls, and its path-based forms of
// the mode, owner and time changes (see seccomp_linux.go).
var archDenied = []deniedSyscall{
	{unix.SYS_IOPL, "iopl"}, {unix.SYS_IOPERM, "ioperm"}, {unix.SYS_CREATE_MODULE, "create_module"},
	{unix.SYS__SYSCTL, "_sysctl"}, {unix.SYS_USELIB, "uselib"}, {unix.SYS_NFSSERVCTL, "nfsservctl"},
	{unix.SYS_LOOKUP_DCOOKIE, "lookup_dcookie"},
	{unix.SYS_CHMOD, "chmod"}, {unix.SYS_CHOWN, "chown"}, {unix.SYS_LCHOWN, "lchown"},
	{unix.SYS_UTIME, "utime"}, {unix.SYS_UTIMES, "utimes"}, {unix.SYS_FUTIMESAT, "futimesat"},
}

// archInotify is amd64's older inotify_init, refused with inotify_init1 (see
// commonInotify).
var archInotify = []deniedSyscall{{unix.SYS_INOTIFY_INIT, "inotify_init"}}

// archArgRules are amd64's path-based forms of the creating calls.
var archArgRules = []argRule{
	{unix.SYS_OPEN, "open", createNoSetID(1, 2)},
	{unix.SYS_CREAT, "creat", noSetID(1)},
	{unix.SYS_MKDIR, "mkdir", noSetID(1)},
	{unix.SYS_MKNOD, "mknod", noSetID(1)},
}
