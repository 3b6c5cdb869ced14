package platform

import "golang.org/x/sys/unix"

// auditArch is AUDIT_ARCH_AARCH64: the filter refuses to run a process of another ABI.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is zero: arm64 has no second system call numbering.
const x32Bit = 0

// archDenied are arm64's legacy system calls (see seccomp_linux.go). arm64 has only the
// *at forms of the file calls, which commonDenied and commonArgRules cover.
var archDenied = []deniedSyscall{
	{unix.SYS_NFSSERVCTL, "nfsservctl"}, {unix.SYS_LOOKUP_DCOOKIE, "lookup_dcookie"},
}

// archInotify is empty: arm64 has only inotify_init1 (commonInotify).
var archInotify []deniedSyscall

// archArgRules is empty: see archDenied.
var archArgRules []argRule
