package launch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The launch protocol. The host forks a child on its spawner thread, unrestricted and
// in the adapter's namespaces and cgroup, and that child executes the host's own binary
// (/proc/self/exe) with Arg0 as argv[0], Arg1 as argv[1] and these descriptors:
//
//	0, 1, 2  the adapter's standard files
//	3        a pinned script's sealed copy, or closed
//	4        the launch specification (a memfd, Encode)
//	5        the Landlock ruleset, or closed
//	6        the status pipe's write end
//	7        a pinned native executable's sealed copy, or closed
//	8        the hold pipe's read end, or closed
//	9        the control pipe's read end (a reaper only, see Spec.Reaper), or closed
const (
	Arg0 = "adapterkit-sandbox-launcher"
	Arg1 = "launch-v1"

	FdScript = 3
	FdSpec   = 4
	FdRules  = 5
	FdStatus = 6
	FdExe    = 7
	FdHold   = 8
	FdCtl    = 9

	// Ready is the byte the launcher writes to the status pipe once the sandbox
	// is applied, right before it executes the adapter (after waiting on the hold pipe
	// when the specification says so): a status pipe that ends without it means the
	// launcher died on its way.
	Ready = 0x01
	// Started, followed by the adapter's pid (4 bytes, big-endian), is what a reaper
	// writes once the adapter runs; Done is its last byte, written once it has reaped
	// every descendant, right before it exits as the adapter did (see Spec.Reaper).
	Started = 0x02
	Done    = 0x03

	// EnvNProc, in the launcher's own environment (not the adapter's), asks it to set
	// RLIMIT_NPROC, soft and hard, to its decimal value (or leave it lower) right
	// before it executes the adapter. The host passes it only when the adapter runs
	// in a user namespace of its own, where that limit counts the adapter's tree alone.
	EnvNProc = "ADAPTERKIT_LAUNCH_NPROC"

	Magic = "adapterkit launch v1\n"
	// specMax bounds the specification the launcher reads (argv and environment
	// are bounded by the kernel's ARG_MAX, well below it).
	specMax = 64 << 20
)

// Secure bits (linux/securebits.h) the launcher sets and locks: uid 0 gains no
// capability by executing a program, and no capability may be raised into the ambient
// set again.
const (
	secbitNoRoot               = 1 << 0
	secbitNoRootLocked         = 1 << 1
	secbitNoSetuidFixup        = 1 << 2
	secbitNoSetuidFixupLocked  = 1 << 3
	secbitKeepCapsLocked       = 1 << 5
	secbitNoCapAmbientRaise    = 1 << 6
	secbitNoCapAmbientRaiseLck = 1 << 7
	launcherSecureBits         = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLck
)

func init() {
	if len(os.Args) == 2 && os.Args[0] == Arg0 && os.Args[1] == Arg1 {
		os.Exit(run())
	}
}

// Spec is what the launcher needs besides its descriptors.
type Spec struct {
	Path   string   // what to execute
	Argv   []string // the adapter's argv
	Env    []string // the adapter's environment
	Filter []unix.SockFilter
	Rules  bool // descriptor 5 holds a Landlock ruleset
	Script bool // descriptor 3 is a pinned script the adapter keeps
	Hold   bool // wait for a byte on descriptor 8 between ready and the exec
	// Reaper keeps the launcher alive as the adapter's parent, a child subreaper that
	// is never sandboxed itself: a thread of it applies the sandbox to itself alone and
	// starts the adapter, then ends. The reaper reports Started and the pid, kills the
	// adapter when the control pipe (descriptor 9) yields a byte or its end or when
	// SIGTERM (its parent-death signal) comes, and once the adapter has exited kills and
	// reaps every process re-parented to it, reports Done and exits as the adapter did
	// (reaper_linux.go).
	Reaper bool
}

// Encode serialises s: the magic line, the flags, then length-prefixed
// strings and the filter's instructions.
func Encode(s *Spec) []byte {
	b := []byte(Magic)
	flags := uint32(0)
	if s.Rules {
		flags |= 1
	}
	if s.Script {
		flags |= 2
	}
	if s.Hold {
		flags |= 4
	}
	if s.Reaper {
		flags |= 8
	}
	b = binary.BigEndian.AppendUint32(b, flags)
	str := func(v string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	list := func(l []string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(l)))
		for _, v := range l {
			str(v)
		}
	}
	str(s.Path)
	list(s.Argv)
	list(s.Env)
	b = binary.BigEndian.AppendUint32(b, uint32(len(s.Filter)))
	for _, f := range s.Filter {
		b = binary.BigEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.BigEndian.AppendUint32(b, f.K)
	}
	return b
}

var errSpec = errors.New("malformed launch specification")

// Decode is Encode's inverse; it refuses anything else.
func Decode(b []byte) (*Spec, error) {
	rest, ok := cutPrefix(b, Magic)
	if !ok {
		return nil, errSpec
	}
	u32 := func() (uint32, bool) {
		if len(rest) < 4 {
			return 0, false
		}
		v := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := u32()
		if !ok || uint64(n) > uint64(len(rest)) {
			return "", false
		}
		v := string(rest[:n])
		rest = rest[n:]
		return v, true
	}
	list := func() ([]string, bool) {
		n, ok := u32()
		if !ok || uint64(n) > uint64(len(rest))/4 {
			return nil, false
		}
		l := make([]string, 0, n)
		for range n {
			v, ok := str()
			if !ok {
				return nil, false
			}
			l = append(l, v)
		}
		return l, true
	}
	s := &Spec{}
	flags, ok1 := u32()
	s.Rules, s.Script, s.Hold, s.Reaper = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	var ok2, ok3, ok4 bool
	s.Path, ok2 = str()
	s.Argv, ok3 = list()
	s.Env, ok4 = list()
	n, ok5 := u32()
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || flags&^15 != 0 || uint64(n)*8 != uint64(len(rest)) || n > 0xffff {
		return nil, errSpec
	}
	for range n {
		s.Filter = append(s.Filter, unix.SockFilter{
			Code: binary.BigEndian.Uint16(rest), Jt: rest[2], Jf: rest[3], K: binary.BigEndian.Uint32(rest[4:]),
		})
		rest = rest[8:]
	}
	return s, nil
}

func cutPrefix(b []byte, p string) ([]byte, bool) {
	if len(b) < len(p) || string(b[:len(p)]) != p {
		return nil, false
	}
	return b[len(p):], true
}

// status is one failed step of the launcher as it reports it on the status pipe:
// the step, the error's text and its errno in decimal (0 when it is none), separated by
// NULs.
func status(step string, err error) []byte {
	var no syscall.Errno
	errors.As(err, &no)
	return []byte(step + "\x00" + err.Error() + "\x00" + strconv.Itoa(int(no)))
}

// ParseStatus reads a failed step's report from what the status pipe held: the step and
// the cause, whose Unwrap gives the errno (nil when the report held none).
func ParseStatus(b []byte) (step string, cause error) {
	f := strings.SplitN(string(b), "\x00", 3)
	n, err := 0, error(nil)
	if len(f) == 3 {
		n, err = strconv.Atoi(f[2])
	}
	if len(f) != 3 || f[0] == "" || err != nil {
		return "the launcher stage", fmt.Errorf("unreadable status %q", b)
	}
	return f[0], &Cause{msg: f[1], no: syscall.Errno(n)}
}

// Cause is the launcher's error as the host receives it: its text, and the errno
// errors.Is matches.
type Cause struct {
	msg string
	no  syscall.Errno
}

func (e *Cause) Error() string { return e.msg }

// Unwrap returns the errno, or nil.
func (e *Cause) Unwrap() error {
	if e.no == 0 {
		return nil
	}
	return e.no
}

// InstallFilter installs prog as a seccomp filter on the calling thread only (no
// TSYNC); no_new_privs must be set on the thread first.
func InstallFilter(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return errors.New("installing the seccomp filter: empty program")
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	if e != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", e)
	}
	return nil
}

// run is the launcher stage. It returns (an exit status) only on failure, after
// reporting the failed step on the status pipe.
func run() int {
	fail := func(step string, err error) int {
		_ = writeAll(FdStatus, status(step, err))
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", Arg0, step, err)
		return 127
	}
	// Package initialisation runs on the main thread, locked to it: every step below
	// restricts that thread, the one that executes the adapter.
	if unix.Gettid() != unix.Getpid() {
		return fail("checking the launcher runs on its main thread", unix.EINVAL)
	}
	// Anyone who may run the host's binary can make it a launcher, with descriptors of
	// their own. From a set-user-ID or set-group-ID binary that would execute their
	// program with the owner's effective ids (the steps below drop capabilities, not
	// ids), so such a launcher refuses before it reads anything.
	if os.Getuid() != os.Geteuid() || os.Getgid() != os.Getegid() {
		return fail("checking the launcher is not set-user-ID or set-group-ID (real and effective ids differ)", unix.EPERM)
	}
	spec, err := readSpec()
	if err != nil {
		return fail("reading the launch specification", err)
	}
	first := uint(FdScript)
	if spec.Script {
		first = FdScript + 1
	}
	if spec.Reaper {
		return runReaper(spec, first, fail)
	}
	if err := keepParentDeathSignal(unix.SIGKILL); err != nil {
		return fail("keeping the parent-death signal", err)
	}
	// Everything past the adapter's own descriptors closes at the exec: the launch
	// specification, the ruleset, the status pipe (its end-of-file tells the host the
	// exec succeeded), and whatever this process opened meanwhile.
	if err := unix.CloseRange(first, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("marking the launcher's descriptors close-on-exec", err)
	}
	if step, err := restrict(spec); err != nil {
		return fail(step, err)
	}
	if err := writeAll(FdStatus, []byte{Ready}); err != nil {
		return 127 // the host stopped reading: it is gone, or gave up on this start
	}
	if !awaitHold(spec) {
		return 127 // the host closed the pipe instead: it gave up on this start
	}
	if v, ok := os.LookupEnv(EnvNProc); ok {
		if err := limitNProc(v); err != nil {
			return fail("limiting the adapter's processes (RLIMIT_NPROC)", err)
		}
	}
	err = unix.Exec(spec.Path, spec.Argv, spec.Env)
	return fail("executing the adapter", err)
}

// restrict applies the sandbox to the calling thread: no capability, no_new_privs,
// the Landlock ruleset and the seccomp filter. On failure it returns the step.
func restrict(spec *Spec) (string, error) {
	if err := dropCapabilities(); err != nil {
		return "dropping capabilities", err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "setting no_new_privs", err
	}
	if spec.Rules {
		if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, FdRules, 0, 0); e != 0 {
			return "enforcing the Landlock ruleset", e
		}
	}
	if spec.Filter != nil {
		if err := InstallFilter(spec.Filter); err != nil {
			if u := errors.Unwrap(err); u != nil {
				err = u
			}
			return "installing the seccomp filter", err
		}
	}
	return "", nil
}

// awaitHold waits, when the specification says so, for the host's byte on the hold
// pipe; false when the host closed it instead.
func awaitHold(spec *Spec) bool {
	if !spec.Hold {
		return true
	}
	var b [1]byte
	n, err := unix.Read(FdHold, b[:])
	for err == unix.EINTR {
		n, err = unix.Read(FdHold, b[:])
	}
	return n == 1
}

// limitNProc lowers RLIMIT_NPROC, soft and hard, to the decimal v (a limit already
// lower stays), so that the adapter cannot raise it again.
func limitNProc(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("%s=%q: %w", EnvNProc, v, unix.EINVAL)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return err
	}
	lim.Cur, lim.Max = min(lim.Cur, n), min(lim.Max, n)
	return unix.Setrlimit(unix.RLIMIT_NPROC, &lim)
}

// writeAll writes b to fd.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return unix.EIO
		}
		b = b[n:]
	}
	return nil
}

// readSpec reads and decodes descriptor 4.
func readSpec() (*Spec, error) {
	var st unix.Stat_t
	if err := unix.Fstat(FdSpec, &st); err != nil {
		return nil, err
	}
	if st.Size <= 0 || st.Size > specMax {
		return nil, errSpec
	}
	b := make([]byte, st.Size)
	for off := 0; off < len(b); {
		n, err := unix.Pread(FdSpec, b[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errSpec
		}
		off += n
	}
	return Decode(b)
}

// keepParentDeathSignal sets the parent-death signal again: executing the host's binary
// clears it when that exec changes credentials (a set-uid host, or one with file
// capabilities). Should the forking thread have ended before, the status pipe's reader
// is gone with it, and the launcher stops rather than start an orphan.
func keepParentDeathSignal(sig unix.Signal) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0); err != nil {
		return err
	}
	fds := []unix.PollFd{{Fd: FdStatus, Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			return errors.New("the host is gone")
		}
		return nil
	}
}

// dropCapabilities leaves the calling thread with no capability, and with no way to
// gain one by executing a program: the bounding set dropped and the secure bits locked
// (when the thread may: CAP_SETPCAP), the ambient set cleared, and the effective,
// permitted and inheritable sets emptied. A thread without CAP_SETPCAP holds no
// capability worth dropping from the bounding set: with no_new_privs (set next) it can
// gain none by exec either.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, launcherSecureBits, 0, 0, 0); err != nil {
			return fmt.Errorf("locking the secure bits: %w", err)
		}
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if err == unix.EINVAL {
				break // past the kernel's last capability
			}
			if err != nil {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clearing the ambient set: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return err
	}
	return nil
}
