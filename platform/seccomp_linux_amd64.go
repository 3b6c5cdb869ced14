package platform

import "golang.org/x/sys/unix"

// auditArch is AUDIT_ARCH_X86_64: the filter refuses to run a process of another ABI.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the x32 ABI's system call numbers, which would otherwise pass the
// comparisons by number.
const x32Bit = 0x40000000

// archDenied are amd64's legacy and port-I/O system calls (see seccomp_linux.go).
var archDenied = []deniedSyscall{
	{unix.SYS_IOPL, "iopl"}, {unix.SYS_IOPERM, "ioperm"}, {unix.SYS_CREATE_MODULE, "create_module"},
	{unix.SYS__SYSCTL, "_sysctl"}, {unix.SYS_USELIB, "uselib"}, {unix.SYS_NFSSERVCTL, "nfsservctl"},
	{unix.SYS_LOOKUP_DCOOKIE, "lookup_dcookie"},
}
