package platform

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Config describes one adapter process to start. Start never modifies it.
type Config struct {
	// Path is the absolute path of the executable. A relative path is refused, never
	// resolved; no shell is ever involved. On Windows only an explicit .exe.
	Path string
	// Args are argv[1:], passed verbatim (argv[0] is Path).
	Args []string
	// Env is the exact environment of the adapter. nil means an EMPTY environment:
	// nothing of the host is inherited unless listed here. A name given twice reaches
	// the adapter once, with the last value given (as with os/exec), so appending
	// "PATH=/safe" to os.Environ() overrides PATH.
	Env []string
	// Dir is the working directory; "" means the executable's directory. It must be absolute.
	Dir string
	// Stderr receives the adapter's standard error. nil: it goes to the null device, so
	// writes never block the adapter and nothing is parsed. An *os.File is
	// handed to the adapter directly; any other writer is fed by a copying goroutine
	// that ends at Close.
	Stderr io.Writer
	// Resources are optional limits, applied where the platform supports them; see
	// [Tree.LimitErr] for the ones that were not.
	Resources Resources
	// Isolation selects how strongly the tree is contained; the zero value is the
	// strongest available. See [Isolation].
	Isolation Isolation
	// CgroupParent (Linux) is the cgroup v2 directory under which per-adapter cgroups are
	// created, as an absolute filesystem path inside the cgroup2 mount. "" means the
	// host's own cgroup. Use it with a delegated cgroup (systemd Delegate=yes) whose
	// subtree_control enables memory/pids to get Resources applied. The cgroup v1
	// fallback for Resources always uses the host's own v1 cgroups.
	CgroupParent string
	// Logger receives debug and warning messages; nil means hclog.NewNullLogger().
	Logger hclog.Logger
	// Digest, when set, pins the executable: the hex SHA-256 its contents must have.
	// The file is opened and hashed at this start, and a file that differs is not
	// started (a *LaunchError; errors.Is(err, discovery.ErrDigestMismatch) holds). What
	// runs is bound to what was hashed as far as the system allows: Linux executes a
	// sealed in-memory copy of the hashed bytes, kept per digest (a script gets it as
	// its fd 3, see docs/supervision.md); Windows holds the file open without write or
	// delete sharing from the hash until the process exists; macOS hashes the opened
	// file but executes the path, so a file renamed over it in between would run.
	Digest string
	// Sandbox, when set, restricts what the adapter may read, write, execute and
	// connect to; nil (the default) leaves it all of its user's permissions. See
	// [Sandbox].
	Sandbox *Sandbox

	pin *pinned // the opened, hashed executable of a pinned start
}

// Resources are optional limits on the whole process tree. Zero means no limit (but a
// sandboxed adapter on Linux gets a default process limit, see MaxProcesses).
type Resources struct {
	// MemoryBytes caps the memory of the whole tree (Linux: memory.max of its cgroup, or
	// memory.limit_in_bytes of its cgroup v1; the kernel kills at the cap, see
	// [Tree.LimitHit]. Windows: JobMemoryLimit).
	MemoryBytes int64
	// MaxProcesses caps the number of processes of the tree (Linux: pids.max, which
	// counts threads too; a fork beyond it fails with EAGAIN. Windows: ActiveProcessLimit).
	//
	// Zero means no limit, except for a sandboxed adapter on Linux ([Config].Sandbox
	// set), which gets [DefaultSandboxMaxProcesses]. A negative value means no limit
	// at all, that default included. On Linux a sandboxed adapter's limit is applied by
	// its pids cgroup (v2, else v1); where no pids cgroup can be used but the adapter
	// runs in a user namespace of its own, by RLIMIT_NPROC, which the launcher stage sets
	// before it executes the adapter and which there counts the tasks of that namespace
	// only (the adapter's tree). [Tree.LimitErr] reports a limit, the default included,
	// that nothing applied; [Supervision].Sandbox names the limit and what applies it.
	MaxProcesses int
}

// DefaultSandboxMaxProcesses is the process limit of a sandboxed adapter on Linux whose
// [Resources].MaxProcesses is zero: 512 tasks (threads count, as in pids.max). A
// sandboxed adapter runs as the host's user, whose process quota (RLIMIT_NPROC,
// "ulimit -u"; the kernel's threads-max) it shares with the host: without a limit, an
// adapter forking without end takes all of it, and the host then cannot even start a
// thread. Real adapters stay far below: a Go program runs about GOMAXPROCS+10 threads,
// Node.js about a dozen, a JVM one per core and a few dozen more, and a CPython thread
// pool at most 32 workers; 512 leaves room for such a runtime with a pool of children on
// a large machine, and a 4096-task user quota (a common distribution default) most of
// its room. Set MaxProcesses to choose another limit, or a negative value for none.
const DefaultSandboxMaxProcesses = 512

// Isolation chooses the containment of an adapter's process tree.
//
// On Linux the default (IsolationAuto) uses every mechanism available: a cgroup v2 when
// the host may create one (root, or a delegated subtree), and a PID namespace: created
// directly when the host has CAP_SYS_ADMIN, else inside a new user namespace with an
// identity mapping, which an ordinary user may create on most distributions. In a PID
// namespace the adapter is process 1 of its namespace: getpid() returns 1 (getppid() 0),
// signals it installs no handler for are ignored (so SIGTERM does nothing to it unless
// it handles SIGTERM; SIGKILL from the host always works), orphaned descendants are
// re-parented to it and it must reap them, it cannot signal processes outside its
// namespace, and when it exits every process it started is killed by the kernel.
// That last property is what makes a SIGKILLed host leave nothing running, even a
// double-forked setsid grandchild. /proc is the host's: it lists the host's processes
// and /proc/self names the adapter by its host pid.
//
// In the user namespace (MechUserNamespace) the adapter keeps the host's uid and gid, and
// so its access to files; ids that are not mapped, the host user's supplementary groups
// included, appear as 65534 (nobody/nogroup) in getgroups(2) and stat(2), though the
// kernel still checks access with the real ones; setgroups(2) is refused; a set-uid or
// set-gid program whose owner is not mapped (e.g. a set-uid root sudo, su or ping) runs
// without gaining that id. The adapter holds capabilities only over its own
// namespaces, never over the host's files, processes or network; after it executes a
// program with an unmapped or non-zero uid it holds none at all.
//
// An adapter that cannot live as process 1 can opt out with IsolationNoPIDNamespace;
// a host that must not create user namespaces uses IsolationNoUserNamespace.
// [Tree.Supervision] reports what was used and why anything stronger was not. Other
// platforms ignore the values they have no use for.
type Isolation uint8

const (
	// IsolationAuto uses the strongest mechanisms available (cgroup and PID namespace,
	// the latter inside a user namespace when the host is not privileged, on Linux).
	IsolationAuto Isolation = iota
	// IsolationNoPIDNamespace never creates a PID namespace (nor a user namespace);
	// Linux still uses a cgroup. A host killed with SIGKILL then leaves the adapter's
	// descendants (not the adapter itself: parent-death signal) in the cgroup until the
	// next [Sweep].
	IsolationNoPIDNamespace
	// IsolationProcessGroup uses only a process group (and the parent-death signal on
	// Linux). Verification is then impossible on Linux (Verify returns *UnverifiedError)
	// but for a sandboxed adapter, which runs below a reaper of its own ([MechReaper]).
	IsolationProcessGroup
	// IsolationNoUserNamespace is IsolationAuto without user namespaces: a PID namespace
	// only where the host may create one directly (CAP_SYS_ADMIN).
	IsolationNoUserNamespace
)

func (c *Config) logger() hclog.Logger {
	if c.Logger == nil {
		return hclog.NewNullLogger()
	}
	return c.Logger
}

// validate checks Config against the launch rules and returns the working directory.
func (c *Config) validate() (dir string, err error) {
	fail := func(cause error) (string, error) { return "", &LaunchError{Path: c.Path, Err: cause} }
	if !filepath.IsAbs(c.Path) {
		return fail(ErrNotAbsolute)
	}
	if err := checkExeName(c.Path); err != nil {
		return fail(err)
	}
	fi, err := os.Stat(c.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(errors.Join(ErrNotFound, err))
	case err != nil:
		return fail(errors.Join(ErrStart, err))
	case !fi.Mode().IsRegular():
		return fail(ErrNotRegular)
	}
	if err := checkExecutable(fi); err != nil {
		return fail(err)
	}
	dir = c.Dir
	if dir == "" {
		dir = filepath.Dir(c.Path)
	} else if !filepath.IsAbs(dir) {
		return fail(errors.Join(ErrInvalidConfig, errors.New("working directory is not absolute")))
	}
	if f, ok := c.Stderr.(*os.File); ok && !openFile(f) {
		// The adapter would start with descriptor 2 closed, and the first file it opens
		// would become its standard error.
		return fail(errors.Join(ErrInvalidConfig, errors.New("Config.Stderr is a nil or closed *os.File; use nil for the null device")))
	}
	if c.Resources.MemoryBytes < 0 {
		return fail(errors.Join(ErrInvalidConfig, errors.New("negative memory limit")))
	}
	if c.Sandbox != nil {
		if err := c.Sandbox.validate(); err != nil {
			return fail(errors.Join(ErrInvalidConfig, err))
		}
	}
	return dir, nil
}

// env returns the adapter's environment: never nil, so that nothing is inherited.
func (c *Config) env() []string {
	if c.Env == nil {
		return []string{}
	}
	return dedupEnv(c.Env, runtime.GOOS == "windows")
}

// dedupEnv keeps one entry per name, the last one given, at the place of the first
// (as os/exec does): os.StartProcess passes duplicates through, and programs then
// disagree on which one counts (glibc's getenv and bash take the first, Python's
// os.environ the last), so "inherit the environment, but PATH=/safe" could mean
// either. Names compare case-insensitively on Windows. An entry without "=" is kept
// as it is (the launcher refuses it where it must).
func dedupEnv(env []string, foldCase bool) []string {
	key := func(kv string) (string, bool) {
		i := strings.IndexByte(kv, '=')
		if i == 0 { // a leading "=" belongs to the name (Windows' per-drive variables)
			i = strings.IndexByte(kv[1:], '=') + 1
		}
		if i <= 0 {
			return "", false
		}
		if foldCase {
			return strings.ToUpper(kv[:i]), true
		}
		return kv[:i], true
	}
	last := make(map[string]int, len(env))
	for i, kv := range env {
		if k, ok := key(kv); ok {
			last[k] = i
		}
	}
	if len(last) == len(env) {
		return env // nothing duplicated (the common case): no copy
	}
	out := make([]string, 0, len(last))
	placed := make(map[string]int, len(last))
	for _, kv := range env {
		k, ok := key(kv)
		if !ok {
			out = append(out, kv)
			continue
		}
		if at, seen := placed[k]; seen {
			out[at] = env[last[k]]
			continue
		}
		placed[k] = len(out)
		out = append(out, env[last[k]])
	}
	return out
}

// checkWindowsExeName applies the Windows launch rule (R62) to a path, whatever the OS
// running the check: the last element must end in ".exe" (any case), with no trailing
// dot or space (Windows would strip them and run something else) and no alternate data
// stream (a colon after the drive).
func checkWindowsExeName(path string) error {
	base := path
	if i := strings.LastIndexAny(base, `\/`); i >= 0 {
		base = base[i+1:]
	}
	rest := path
	if len(rest) >= 2 && rest[1] == ':' {
		rest = rest[2:]
	}
	switch {
	case strings.HasPrefix(path, `\\?\`) || strings.HasPrefix(path, `\\.\`):
		// Device and verbatim namespaces bypass the usual name normalisation.
		return errNotExe
	case strings.Contains(rest, ":"):
		return errNotExe
	case strings.HasSuffix(base, ".") || strings.HasSuffix(base, " "):
		return errNotExe
	case len(base) <= len(".exe") || !strings.EqualFold(base[len(base)-4:], ".exe"):
		return errNotExe
	}
	return nil
}

// openFile reports whether f is a non-nil *os.File that is not closed.
func openFile(f *os.File) bool {
	if f == nil {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Control(func(uintptr) {}) == nil
}
