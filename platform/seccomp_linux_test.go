package platform

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter's rules, one system call at a time: a helper process installs the
// filter of a policy on its (locked) thread, issues each call raw from that thread and
// reports the errno; the same helper without the filter is the control, where each call
// must succeed (control "ok"); calls whose unfiltered effect is not wanted here ("any") run
// only under the filter.

// scEnv is what a case works on: a scratch directory holding the file f, and the pid
// of a process of the same user outside the helper.
type scEnv struct {
	dir   string
	other int
}

func (e *scEnv) path(name string) string { return filepath.Join(e.dir, name) }

// scCase is one system call tried under a policy.
type scCase struct {
	name    string
	policy  string     // which Sandbox the filter is built from: see scPolicies
	want    unix.Errno // under the filter (0: allowed)
	control string     // without it: "ok" must succeed, "any" is not run
	try     func(e *scEnv) error
}

// scPolicies are the sandboxes the cases' filters are built from.
var scPolicies = map[string]*Sandbox{
	"none": {},
	"tcp":  {ConnectPorts: []uint16{80}},
	"unix": {UnixSockets: true},
	"both": {UnixSockets: true, ConnectPorts: []uint16{80}},
	"net":  {Network: true},
	// inotify: the grant of inotify instances, which count against the user's quota.
	"inotify": {Inotify: true},
}

// atCWD is AT_FDCWD as a raw system call argument.
var atCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// sys issues a raw system call and returns its errno (nil for success).
func sys(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	return nil
}

func cstr(s string) uintptr {
	b, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err)
	}
	return uintptr(unsafe.Pointer(b))
}

// setID checks that the file at path really got the set-user-ID or set-group-ID bit
// (the control proves the attack works without the filter).
func setID(path string, bit uint32) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	if st.Mode&bit == 0 {
		return fmt.Errorf("mode %o: the bit %o was not set", st.Mode, bit)
	}
	return nil
}

// withFd runs f on a descriptor of the file f, opened with flags.
func withFd(e *scEnv, flags int, f func(fd uintptr) error) error {
	fd, err := unix.Open(e.path("f"), flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return f(uintptr(fd))
}

// unusedUID is a uid no process runs as.
const unusedUID = 0x7ffffff0

// setxattrat's struct xattr_args.
type xattrArgs struct {
	value       uint64
	size, flags uint32
}

var scCases = []scCase{
	// Mode, owner, time and extended attribute changes: refused outright.
	{"fchmod", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error { return sys(unix.SYS_FCHMOD, fd, 0o4755) })
	}},
	{"fchmodat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_FCHMODAT, atCWD, cstr(e.path("f")), 0o644)
	}},
	{"fchmodat2", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_FCHMODAT2, atCWD, cstr(e.path("f")), 0o644, 0)
	}},
	{"fchown", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error {
			return sys(unix.SYS_FCHOWN, fd, uintptr(os.Getuid()), uintptr(os.Getgid()))
		})
	}},
	{"fchownat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_FCHOWNAT, atCWD, cstr(e.path("f")), uintptr(os.Getuid()), uintptr(os.Getgid()), 0)
	}},
	{"utimensat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_UTIMENSAT, atCWD, cstr(e.path("f")), 0, 0)
	}},
	{"futimens", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDWR, func(fd uintptr) error { return sys(unix.SYS_UTIMENSAT, fd, 0, 0, 0) })
	}},
	{"setxattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_SETXATTR, cstr(e.path("f")), cstr("user.a"), cstr("1"), 1, 0)
	}},
	{"removexattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_REMOVEXATTR, cstr(e.path("f")), cstr("user.a"))
	}},
	{"lsetxattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_LSETXATTR, cstr(e.path("f")), cstr("user.b"), cstr("1"), 1, 0)
	}},
	{"lremovexattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_LREMOVEXATTR, cstr(e.path("f")), cstr("user.b"))
	}},
	{"fsetxattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error {
			return sys(unix.SYS_FSETXATTR, fd, cstr("user.c"), cstr("1"), 1, 0)
		})
	}},
	{"fremovexattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error { return sys(unix.SYS_FREMOVEXATTR, fd, cstr("user.c")) })
	}},
	{"setxattrat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		v := []byte("1")
		args := xattrArgs{value: uint64(uintptr(unsafe.Pointer(&v[0]))), size: 1}
		err := sys(unix.SYS_SETXATTRAT, atCWD, cstr(e.path("f")), 0, cstr("user.d"), uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args))
		runtime.KeepAlive(v)
		return err
	}},
	{"removexattrat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_REMOVEXATTRAT, atCWD, cstr(e.path("f")), 0, cstr("user.d"))
	}},
	{"file_setattr", "none", unix.EPERM, "ok", func(e *scEnv) error {
		var fa [24]byte // struct file_attr, as file_getattr reads it
		if err := sys(unix.SYS_FILE_GETATTR, atCWD, cstr(e.path("f")), uintptr(unsafe.Pointer(&fa)), 24, 0); err != nil {
			return fmt.Errorf("file_getattr: %w", err)
		}
		return sys(unix.SYS_FILE_SETATTR, atCWD, cstr(e.path("f")), uintptr(unsafe.Pointer(&fa)), 24, 0)
	}},
	{"ioctl FS_IOC_SETFLAGS", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error {
			var flags int64
			if err := sys(unix.SYS_IOCTL, fd, unix.FS_IOC_GETFLAGS, uintptr(unsafe.Pointer(&flags))); err != nil {
				return fmt.Errorf("FS_IOC_GETFLAGS: %w", err)
			}
			return sys(unix.SYS_IOCTL, fd, unix.FS_IOC_SETFLAGS, uintptr(unsafe.Pointer(&flags)))
		})
	}},
	{"ioctl FIONREAD (other ioctls pass)", "none", 0, "ok", func(e *scEnv) error {
		return withFd(e, unix.O_RDONLY, func(fd uintptr) error {
			var n int32
			return sys(unix.SYS_IOCTL, fd, unix.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		})
	}},

	// Creating set-user-ID and set-group-ID files.
	{"openat O_CREAT 04755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_OPENAT, atCWD, cstr(e.path("suid")), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755); err != nil {
			return err
		}
		return setID(e.path("suid"), unix.S_ISUID)
	}},
	{"openat O_CREAT 02755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_OPENAT, atCWD, cstr(e.path("sgid")), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o2755); err != nil {
			return err
		}
		return setID(e.path("sgid"), unix.S_ISGID)
	}},
	{"openat O_TMPFILE 04755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, atCWD, cstr(e.dir), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755, 0, 0)
		if errno != 0 {
			return errno
		}
		defer unix.Close(int(fd))
		var st unix.Stat_t
		if err := unix.Fstat(int(fd), &st); err != nil || st.Mode&unix.S_ISUID == 0 {
			return fmt.Errorf("O_TMPFILE mode %o: %v", st.Mode, err)
		}
		return nil
	}},
	{"openat O_CREAT 0644", "none", 0, "ok", func(e *scEnv) error {
		fd, err := unix.Open(e.path("plain"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}},
	{"openat without O_CREAT, mode 04755", "none", 0, "ok", func(e *scEnv) error {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, atCWD, cstr(e.path("f")), unix.O_RDONLY|unix.O_CLOEXEC, 0o4755, 0, 0)
		if errno != 0 {
			return errno
		}
		return unix.Close(int(fd))
	}},
	{"openat2", "none", unix.ENOSYS, "ok", func(e *scEnv) error {
		fd, err := unix.Openat2(unix.AT_FDCWD, e.path("f"), &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC})
		if err == nil {
			unix.Close(fd)
		}
		return err
	}},
	{"mkdirat 02755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_MKDIRAT, atCWD, cstr(e.path("sgiddir")), 0o2755)
	}},
	{"mkdirat 0755", "none", 0, "ok", func(e *scEnv) error {
		return sys(unix.SYS_MKDIRAT, atCWD, cstr(e.path("dir")), 0o755)
	}},
	{"mknodat S_IFREG 04755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_MKNODAT, atCWD, cstr(e.path("node")), unix.S_IFREG|0o4755, 0); err != nil {
			return err
		}
		return setID(e.path("node"), unix.S_ISUID)
	}},
	{"mknodat S_IFIFO 0644", "none", 0, "ok", func(e *scEnv) error {
		return sys(unix.SYS_MKNODAT, atCWD, cstr(e.path("fifo")), unix.S_IFIFO|0o644, 0)
	}},

	// inotify instances (the user's fs.inotify.max_user_instances): only with the grant.
	{"inotify_init1", "none", unix.EPERM, "ok", inotifyInit1},
	{"inotify_init1", "net", unix.EPERM, "ok", inotifyInit1},
	{"inotify_init1 granted", "inotify", 0, "ok", inotifyInit1},
}

// inotifyInit1 creates an inotify instance and closes it.
func inotifyInit1(*scEnv) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// scProcCases name another process of the same user, or the caller (pid 0).
var scProcCases = []scCase{
	{"prlimit64 other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		var old unix.Rlimit
		return unix.Prlimit(e.other, unix.RLIMIT_CORE, nil, &old)
	}},
	{"prlimit64 self", "none", 0, "ok", func(*scEnv) error {
		var old unix.Rlimit
		if err := unix.Prlimit(0, unix.RLIMIT_CORE, nil, &old); err != nil {
			return err
		}
		return unix.Prlimit(0, unix.RLIMIT_CORE, &old, nil)
	}},
	{"sched_setaffinity other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(e.other, &set); err != nil {
			return err
		}
		return unix.SchedSetaffinity(e.other, &set)
	}},
	{"sched_setaffinity self", "none", 0, "ok", func(*scEnv) error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return err
		}
		return unix.SchedSetaffinity(0, &set)
	}},
	{"sched_setparam other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		var prio int32
		return sys(unix.SYS_SCHED_SETPARAM, uintptr(e.other), uintptr(unsafe.Pointer(&prio)))
	}},
	{"sched_setscheduler other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		var prio int32
		return sys(unix.SYS_SCHED_SETSCHEDULER, uintptr(e.other), unix.SCHED_NORMAL, uintptr(unsafe.Pointer(&prio)))
	}},
	{"sched_setattr other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		attr, err := unix.SchedGetAttr(e.other, 0)
		if err != nil {
			return err
		}
		return unix.SchedSetAttr(e.other, attr, 0)
	}},
	{"setpriority other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, e.other)
		if err != nil {
			return err
		}
		return unix.Setpriority(unix.PRIO_PROCESS, e.other, 20-prio) // getpriority's 40..1 is nice -20..19
	}},
	{"setpriority self", "none", 0, "ok", func(*scEnv) error {
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
		if err != nil {
			return err
		}
		return unix.Setpriority(unix.PRIO_PROCESS, 0, 20-prio)
	}},
	{"setpriority PRIO_USER", "none", unix.EPERM, "any", func(*scEnv) error {
		// A uid no process has (ESRCH unfiltered): the control must not renice anything.
		return sys(unix.SYS_SETPRIORITY, unix.PRIO_USER, unusedUID, 0)
	}},
	{"ioprio_set other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		prio, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProc, uintptr(e.other), 0)
		if errno != 0 {
			return errno
		}
		return sys(unix.SYS_IOPRIO_SET, ioprioWhoProc, uintptr(e.other), prio)
	}},
	{"ioprio_set self", "none", 0, "ok", func(*scEnv) error {
		prio, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProc, 0, 0)
		if errno != 0 {
			return errno
		}
		return sys(unix.SYS_IOPRIO_SET, ioprioWhoProc, 0, prio)
	}},
	{"move_pages other", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_MOVE_PAGES, uintptr(e.other), 0, 0, 0, 0, 0)
	}},
	{"migrate_pages other", "none", unix.EPERM, "any", func(e *scEnv) error {
		mask := uint64(1)
		return sys(unix.SYS_MIGRATE_PAGES, uintptr(e.other), 64, uintptr(unsafe.Pointer(&mask)), uintptr(unsafe.Pointer(&mask)))
	}},
	{"kcmp", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_KCMP, uintptr(e.other), uintptr(e.other), 0 /* KCMP_FILE */, 0, 0)
	}},
	{"process_vm_readv", "none", unix.EPERM, "any", func(e *scEnv) error {
		return sys(unix.SYS_PROCESS_VM_READV, uintptr(e.other), 0, 0, 0, 0, 0)
	}},
}

func init() { osHelpers["seccomp"] = seccompHelper }

// allSCCases is every case, the architecture's own included.
func allSCCases() []scCase {
	return append(append(append(append(append([]scCase(nil), scCases...), archSCCases...), scProcCases...), scSocketCases...), scContainCases...)
}

// seccompHelper: args are the policy, "filter" or "control", the scratch directory and
// the other process's pid. It prints "index errno" for each case of the policy.
func seccompHelper(args []string) int {
	policy, filtered, dir := args[0], args[1] == "filter", args[2]
	other, _ := strconv.Atoi(args[3])
	e := &scEnv{dir: dir, other: other}
	if err := os.WriteFile(e.path("f"), []byte("f"), 0o644); err != nil {
		fmt.Println("setup", err)
		return 3
	}
	runtime.LockOSThread() // the filter is this thread's; never unlocked, the process ends
	if filtered {
		prog, _, err := seccompFilter(scPolicies[policy])
		if err == nil {
			err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}
		if err == nil {
			err = installSeccomp(prog)
		}
		if err != nil {
			fmt.Println("setup", err)
			return 3
		}
	}
	for i, c := range allSCCases() {
		if c.policy != policy || !filtered && c.control != "ok" {
			continue // an unchecked control is not run: it might load a module or renice others
		}
		err := c.try(e)
		var errno unix.Errno
		switch {
		case err == nil:
			fmt.Printf("%d 0\n", i)
		case errors.As(err, &errno):
			fmt.Printf("%d %d %v\n", i, int(errno), err)
		default:
			fmt.Printf("%d -1 %v\n", i, err)
		}
	}
	return 0
}

// runSeccompHelper runs the helper for one policy and returns each case's line.
func runSeccompHelper(t *testing.T, policy, mode string, other int) map[int]string {
	t.Helper()
	out, err := helperCmd("seccomp", policy, mode, t.TempDir(), strconv.Itoa(other)).Output()
	if err != nil {
		t.Fatalf("seccomp helper %s %s: %v\n%s", policy, mode, err, out)
	}
	lines := map[int]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k == "setup" {
			t.Fatalf("seccomp helper %s %s: %s", policy, mode, v)
		}
		i, _ := strconv.Atoi(k)
		lines[i] = v
	}
	return lines
}

// Each rule refuses its call with its errno under the filter, and each call succeeds
// without it; the calls a rule lets through (the caller itself, a plain create, an
// AF_UNIX stream pair) succeed under the filter too.
func TestSeccompRules(t *testing.T) {
	if auditArch == 0 {
		t.Skip("no seccomp filter is defined for this architecture")
	}
	if os.Geteuid() != 0 {
		t.Skip("the controls change owners, priorities and other processes' limits, which needs root")
	}
	other := helperCmd("block")
	otherIn, _ := other.StdinPipe()
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { otherIn.Close(); _ = other.Wait() }()
	cases := allSCCases()
	for policy := range scPolicies {
		filtered := runSeccompHelper(t, policy, "filter", other.Process.Pid)
		control := runSeccompHelper(t, policy, "control", other.Process.Pid)
		for i, c := range cases {
			if c.policy != policy {
				continue
			}
			want := strconv.Itoa(int(c.want))
			if g, ok := filtered[i]; !ok || strings.Fields(g)[0] != want {
				t.Errorf("%s under %s: got %q, want errno %d (%v)", c.name, policy, g, c.want, c.want)
			}
			if g := control[i]; c.control == "ok" && g != "0" {
				t.Errorf("%s under %s, control: got %q, want success", c.name, policy, g)
			}
		}
	}
}

// The filter of every policy assembles: its jumps land inside the program, and its
// description counts what it refuses.
func TestSeccompFilterAssembles(t *testing.T) {
	if auditArch == 0 {
		t.Skip("no seccomp filter is defined for this architecture")
	}
	for name, s := range scPolicies {
		prog, n, err := seccompFilter(s)
		if err != nil || len(prog) == 0 || n < len(commonDenied) {
			t.Errorf("%s: %d instructions, %d denied, %v", name, len(prog), n, err)
		}
		base := len(commonDenied) + len(archDenied)
		if !s.Inotify {
			base += len(commonInotify) + len(archInotify)
		}
		if want := listenDenied(s); want != (n == base+1) {
			t.Errorf("%s: listen denied %v, but %d denied", name, want, n)
		}
	}
}
