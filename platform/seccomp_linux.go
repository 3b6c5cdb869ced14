package platform

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/platform/internal/launch"
)

// The seccomp filter of a sandboxed adapter is built by hand from unix.SockFilter: it
// is a straight list of comparisons (a few hundred instructions), which needs no
// assembler library. It refuses (EPERM) what Landlock does not govern:
//
//   - other processes' memory and execution: ptrace, process_vm_readv/writev,
//     pidfd_getfd, kcmp, process_madvise (Landlock also scopes ptrace; this refuses
//     them outright);
//   - any change of a file's mode, owner, times or extended attributes: the chmod,
//     chown and utime families, the setxattr/removexattr families (and their *at forms)
//     and file_setattr, and the FS_IOC_SETFLAGS / FS_IOC_FSSETXATTR ioctls (chattr).
//     Landlock has no right for these, and seccomp cannot see which file a call names,
//     so they are refused everywhere, the write grants and the private temporary
//     directory included (see docs/containment.md);
//   - creating a file with the set-user-ID or set-group-ID bit: open, openat and creat
//     with O_CREAT or O_TMPFILE and a mode with 06000, mkdir/mkdirat and mknod/mknodat
//     with one (seccomp_args_linux.go); openat2, whose flags and mode sit in a structure
//     seccomp cannot read, fails with ENOSYS, which every caller treats as "use openat";
//   - system calls that name another process without a permission check Landlock
//     hooks: prlimit64, sched_setaffinity, sched_setparam, sched_setscheduler,
//     sched_setattr, migrate_pages and move_pages unless the pid is 0 (the caller),
//     setpriority unless PRIO_PROCESS of 0, ioprio_set unless IOPRIO_WHO_PROCESS of 0.
//     Signals (kill, tgkill, pidfd_send_signal) are Landlock's signal scope's;
//   - the mount table and namespaces: mount, umount2, pivot_root, the new mount API
//     (fsopen, fsconfig, fsmount, fspick, move_mount, open_tree, open_tree_attr,
//     mount_setattr), statmount and listmount (the mount table, which /proc would show
//     and Landlock keeps closed there), unshare, setns, chroot, and clone with a CLONE_NEW* flag (clone3,
//     whose flags seccomp cannot read, fails with ENOSYS; the C libraries then use
//     clone): no new namespace from inside, so no capability in a user namespace of
//     the adapter's own either (the launcher installs this filter after the adapter's
//     own namespaces exist);
//   - System V IPC (shmget, shmat, shmctl, msgget, msgsnd, msgrcv, msgctl, semget,
//     semop, semtimedop, semctl) and POSIX message queues (mq_*): their objects belong
//     to the IPC namespace, which the adapter shares with the host, Landlock does not
//     govern them, and the same user's segments, queues and semaphores (a root host's:
//     every root-owned one) would be open to it — a channel to local programs as
//     "no Unix sockets" closes the others (shmdt, which only detaches, passes);
//   - fcntl(F_SETLEASE): a lease makes every writer of the file wait on the adapter,
//     and an adapter of a root host owns every root-owned file it may read;
//   - the terminal ioctls TIOCSTI and TIOCLINUX, which would type into (or paste on) a
//     terminal the adapter holds a descriptor of, for the shell behind it to run;
//   - kernel facilities that are attack surface or side channels rather than anything an
//     adapter needs: bpf, perf_event_open, userfaultfd, keyctl, add_key, request_key
//     (the per-user keyring is shared with the host), io_uring_setup/enter/register
//     (io_uring performs opens, sockets and connects without passing this filter),
//     fanotify_init, name_to_handle_at, open_by_handle_at (opening by handle bypasses
//     path checks);
//   - administration reserved to root, refused in case the host runs as root: reboot,
//     kexec_load, kexec_file_load, init/finit/delete_module, swapon/off, acct,
//     settimeofday, clock_settime, clock_adjtime, adjtimex, syslog, quotactl,
//     sethostname, setdomainname, vhangup (and on amd64 iopl, ioperm, create_module,
//     _sysctl, uselib, nfsservctl, lookup_dcookie);
//   - inotify_init1 (and on amd64 inotify_init) unless Sandbox.Inotify: an inotify
//     instance counts against its user's fs.inotify.max_user_instances (128 by
//     default), which the adapter, running as the host's user, shares with the host; a
//     user namespace does not separate them (the count is charged up its hierarchy);
//   - memfd_create without MFD_NOEXEC_SEAL: a memfd lives on an internal mount Landlock
//     does not govern, so executing one would escape the exec rules;
//   - sockets outside the network grant (without Sandbox.Network): socket(2) creates
//     only AF_UNIX (with UnixSockets) and, with ConnectPorts, TCP stream sockets of
//     AF_INET and AF_INET6 (protocol 0 or IPPROTO_TCP); socketpair(2) only AF_UNIX pairs,
//     and stream ones unless UnixSockets (a datagram pair can sendto any pathname socket);
//     listen(2) only with UnixSockets and no ConnectPorts, where no TCP socket can
//     exist (listen on an unbound TCP socket binds a port on every address, and
//     Landlock governs bind, not listen). The protocol check matters: Landlock's TCP
//     rules do not govern MPTCP sockets (IPPROTO_MPTCP), which Go's net.Listen even
//     tries first; with that protocol refused, the program falls back to TCP and
//     Landlock decides. UDP, raw, SCTP and ICMP sockets are never created.
//
// System calls of another architecture's ABI (x32 on amd64) are refused with ENOSYS;
// a process of another audit architecture is killed. Arguments are compared in their
// low 32 bits: every argument checked is an int, unsigned int or mode_t, which the
// kernel truncates to those bits itself.

// deniedSyscall is one system call the filter refuses.
type deniedSyscall struct {
	nr   uintptr
	name string
}

// commonDenied is the part of the list present on every architecture.
var commonDenied = []deniedSyscall{
	{unix.SYS_PTRACE, "ptrace"}, {unix.SYS_PROCESS_VM_READV, "process_vm_readv"},
	{unix.SYS_PROCESS_VM_WRITEV, "process_vm_writev"}, {unix.SYS_PIDFD_GETFD, "pidfd_getfd"},
	{unix.SYS_KCMP, "kcmp"}, {unix.SYS_PROCESS_MADVISE, "process_madvise"},
	{unix.SYS_FCHMOD, "fchmod"}, {unix.SYS_FCHMODAT, "fchmodat"}, {unix.SYS_FCHMODAT2, "fchmodat2"},
	{unix.SYS_FCHOWN, "fchown"}, {unix.SYS_FCHOWNAT, "fchownat"}, {unix.SYS_UTIMENSAT, "utimensat"},
	{unix.SYS_SETXATTR, "setxattr"}, {unix.SYS_LSETXATTR, "lsetxattr"}, {unix.SYS_FSETXATTR, "fsetxattr"},
	{unix.SYS_REMOVEXATTR, "removexattr"}, {unix.SYS_LREMOVEXATTR, "lremovexattr"},
	{unix.SYS_FREMOVEXATTR, "fremovexattr"}, {unix.SYS_SETXATTRAT, "setxattrat"},
	{unix.SYS_REMOVEXATTRAT, "removexattrat"}, {unix.SYS_FILE_SETATTR, "file_setattr"},
	{unix.SYS_MOUNT, "mount"}, {unix.SYS_UMOUNT2, "umount2"}, {unix.SYS_PIVOT_ROOT, "pivot_root"},
	{unix.SYS_FSOPEN, "fsopen"}, {unix.SYS_FSCONFIG, "fsconfig"}, {unix.SYS_FSMOUNT, "fsmount"},
	{unix.SYS_FSPICK, "fspick"}, {unix.SYS_MOVE_MOUNT, "move_mount"}, {unix.SYS_OPEN_TREE, "open_tree"},
	{unix.SYS_OPEN_TREE_ATTR, "open_tree_attr"}, {unix.SYS_MOUNT_SETATTR, "mount_setattr"},
	{unix.SYS_STATMOUNT, "statmount"}, {unix.SYS_LISTMOUNT, "listmount"},
	{unix.SYS_UNSHARE, "unshare"}, {unix.SYS_SETNS, "setns"}, {unix.SYS_CHROOT, "chroot"},
	{unix.SYS_BPF, "bpf"}, {unix.SYS_PERF_EVENT_OPEN, "perf_event_open"}, {unix.SYS_USERFAULTFD, "userfaultfd"},
	{unix.SYS_KEYCTL, "keyctl"}, {unix.SYS_ADD_KEY, "add_key"}, {unix.SYS_REQUEST_KEY, "request_key"},
	{unix.SYS_IO_URING_SETUP, "io_uring_setup"}, {unix.SYS_IO_URING_ENTER, "io_uring_enter"},
	{unix.SYS_IO_URING_REGISTER, "io_uring_register"}, {unix.SYS_FANOTIFY_INIT, "fanotify_init"},
	{unix.SYS_NAME_TO_HANDLE_AT, "name_to_handle_at"}, {unix.SYS_OPEN_BY_HANDLE_AT, "open_by_handle_at"},
	{unix.SYS_REBOOT, "reboot"}, {unix.SYS_KEXEC_LOAD, "kexec_load"}, {unix.SYS_KEXEC_FILE_LOAD, "kexec_file_load"},
	{unix.SYS_INIT_MODULE, "init_module"}, {unix.SYS_FINIT_MODULE, "finit_module"},
	{unix.SYS_DELETE_MODULE, "delete_module"}, {unix.SYS_SWAPON, "swapon"}, {unix.SYS_SWAPOFF, "swapoff"},
	{unix.SYS_ACCT, "acct"}, {unix.SYS_SETTIMEOFDAY, "settimeofday"}, {unix.SYS_CLOCK_SETTIME, "clock_settime"},
	{unix.SYS_CLOCK_ADJTIME, "clock_adjtime"}, {unix.SYS_ADJTIMEX, "adjtimex"}, {unix.SYS_SYSLOG, "syslog"},
	{unix.SYS_QUOTACTL, "quotactl"}, {unix.SYS_SETHOSTNAME, "sethostname"},
	{unix.SYS_SETDOMAINNAME, "setdomainname"}, {unix.SYS_VHANGUP, "vhangup"},
	{unix.SYS_SHMGET, "shmget"}, {unix.SYS_SHMAT, "shmat"}, {unix.SYS_SHMCTL, "shmctl"},
	{unix.SYS_MSGGET, "msgget"}, {unix.SYS_MSGSND, "msgsnd"}, {unix.SYS_MSGRCV, "msgrcv"},
	{unix.SYS_MSGCTL, "msgctl"}, {unix.SYS_SEMGET, "semget"}, {unix.SYS_SEMOP, "semop"},
	{unix.SYS_SEMTIMEDOP, "semtimedop"}, {unix.SYS_SEMCTL, "semctl"},
	{unix.SYS_MQ_OPEN, "mq_open"}, {unix.SYS_MQ_UNLINK, "mq_unlink"},
	{unix.SYS_MQ_TIMEDSEND, "mq_timedsend"}, {unix.SYS_MQ_TIMEDRECEIVE, "mq_timedreceive"},
	{unix.SYS_MQ_NOTIFY, "mq_notify"}, {unix.SYS_MQ_GETSETATTR, "mq_getsetattr"},
}

// commonInotify are the inotify calls refused without Sandbox.Inotify, on every
// architecture (archInotify adds the others).
var commonInotify = []deniedSyscall{{unix.SYS_INOTIFY_INIT1, "inotify_init1"}}

// deniedList is every system call the filter for s refuses outright.
func deniedList(s *Sandbox) []deniedSyscall {
	denied := append(append([]deniedSyscall(nil), commonDenied...), archDenied...)
	if !s.Inotify {
		denied = append(append(denied, commonInotify...), archInotify...)
	}
	if listenDenied(s) {
		denied = append(denied, deniedSyscall{unix.SYS_LISTEN, "listen"})
	}
	return denied
}

// BPF opcodes and seccomp return values used below.
const (
	bpfLdAbsW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfJa      = unix.BPF_JMP | unix.BPF_JA
	bpfAnd     = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet     = unix.BPF_RET | unix.BPF_K
	seccompArg = 16 // offset of args[0] in struct seccomp_data (low 32 bits first: little endian)

	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

// bpfAsm assembles a program whose jumps name labels, resolved by build.
type bpfAsm struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	far    map[int]string // unconditional jumps: their 32-bit offset is in K
	labels map[string]int
}

func (a *bpfAsm) stmt(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

// jump appends a conditional jump to label jt when true, jf when false ("" is the next
// instruction).
func (a *bpfAsm) jump(code uint16, k uint32, jt, jf string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.ins)] = [2]string{jt, jf}
	a.stmt(code, k)
}

// ja appends an unconditional jump to label.
func (a *bpfAsm) ja(label string) {
	if a.far == nil {
		a.far = map[int]string{}
	}
	a.far[len(a.ins)] = label
	a.stmt(bpfJa, 0)
}

// label names the next instruction; a name is defined once.
func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	if _, dup := a.labels[name]; dup {
		panic("seccomp filter: label " + name + " defined twice")
	}
	a.labels[name] = len(a.ins)
}

func (a *bpfAsm) build() ([]unix.SockFilter, error) {
	for i, j := range a.jumps {
		for n, l := range j {
			if l == "" {
				continue
			}
			to, ok := a.labels[l]
			off := to - i - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp filter: jump from %d to %q (%d) is out of range", i, l, to)
			}
			if n == 0 {
				a.ins[i].Jt = uint8(off)
			} else {
				a.ins[i].Jf = uint8(off)
			}
		}
	}
	for i, l := range a.far {
		to, ok := a.labels[l]
		if !ok || to <= i {
			return nil, fmt.Errorf("seccomp filter: jump from %d to %q is not forward", i, l)
		}
		a.ins[i].K = uint32(to - i - 1)
	}
	if len(a.ins) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp filter: %d instructions, more than %d", len(a.ins), unix.BPF_MAXINSNS)
	}
	return a.ins, nil
}

// seccompFilter builds the filter for s, and returns it with the number of system calls
// it refuses outright (argRules(s) lists those it checks by argument).
//
// The layout keeps every conditional jump within its 255 instructions: the refused
// numbers first, each jumping to the EPERM just after them (an unconditional jump,
// whose offset has 32 bits, leads over it); then one comparison per argument-checked
// number, each jumping to its checks, which end at the shared returns.
func seccompFilter(s *Sandbox) ([]unix.SockFilter, int, error) {
	if auditArch == 0 {
		return nil, 0, fmt.Errorf("no seccomp filter is defined for this architecture")
	}
	denied := deniedList(s)
	rules := argRules(s)
	var a bpfAsm
	a.stmt(bpfLdAbsW, 4) // arch
	a.jump(bpfJeq, auditArch, "", "kill")
	a.stmt(bpfLdAbsW, 0) // nr
	if x32Bit != 0 {
		a.jump(bpfJset, x32Bit, "nosys", "")
	}
	for _, d := range denied {
		a.jump(bpfJeq, uint32(d.nr), "denied", "")
	}
	a.ja("checked")
	a.label("denied")
	a.stmt(bpfRet, retEPERM)
	a.label("checked")
	for _, r := range rules {
		a.jump(bpfJeq, uint32(r.nr), "check "+r.name, "")
	}
	a.stmt(bpfRet, retAllow)
	for _, r := range rules {
		a.label("check " + r.name)
		r.emit(&a)
	}
	a.label("allow")
	a.stmt(bpfRet, retAllow)
	a.label("deny")
	a.stmt(bpfRet, retEPERM)
	a.label("nosys")
	a.stmt(bpfRet, retNoSys)
	a.label("kill")
	a.stmt(bpfRet, retKill)
	prog, err := a.build()
	return prog, len(denied), err
}

// seccompHook, when set (tests), stands for the kernel's answer to seccompAvailable.
var seccompHook func() error

// seccompAvailable reports why filters cannot be installed here (nil: they can).
func seccompAvailable() error {
	if seccompHook != nil {
		return seccompHook()
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	if e != 0 {
		return fmt.Errorf("seccomp filters are not available: %w", e)
	}
	return nil
}

// installSeccomp installs prog on the calling thread only (no TSYNC); no_new_privs must
// be set on the thread first. The launcher stage installs the filter with it.
func installSeccomp(prog []unix.SockFilter) error { return launch.InstallFilter(prog) }
