package platform

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// Sandbox is an opt-in least-privilege policy for one adapter: nothing is granted that
// is not named. A nil *Sandbox (the default) starts the adapter with all of its user's
// permissions, and such a start pays nothing for this feature.
//
// A non-nil Sandbox always grants the default policy: the adapter may read and execute
// its own executable (that file only, the target when [Config].Path is a symbolic
// link; not its directory, so the files beside it, other adapters or a ".env", stay
// closed); execute its interpreter (a "#!" line is followed, through "/usr/bin/env NAME" to the
// program NAME finds on the adapter's PATH) and the dynamic loader its executables
// name; read
// the system locations a program needs to run (listed in SECURITY.md: /usr, /bin,
// /sbin, /lib*, a few files under /etc, /dev/zero and the random devices); read and write
// /dev/null and a private temporary directory, created for the adapter, named by TMPDIR in
// its environment (unless Config.Env sets TMPDIR) and removed when it is reaped. It has
// no network and may create no Unix socket (an AF_UNIX stream pair from socketpair(2)
// keeps working), may change no file's mode, owner, times or extended attributes and
// create no set-user-ID or set-group-ID file, may create no inotify instance, and the
// system calls listed in docs/containment.md are refused; it holds no capability, even
// started by root (none can be granted). The fields add to that.
//
// A sandboxed adapter runs as the host's user and so shares that user's quotas with the
// host. On Linux its process tree is therefore limited to [DefaultSandboxMaxProcesses]
// tasks unless [Resources].MaxProcesses says otherwise (see there), and inotify, whose
// instances are a per-user quota too, is refused unless Inotify grants it.
//
// Grants are resolved once per start, and never through a symbolic link an adapter
// could write: each path is opened one component at a time without following links,
// and that descriptor is what is checked and what the kernel's rule is made of, so a
// contained adapter that may write beside another adapter's grant cannot redirect it. A
// Read, Write or Exec path that goes through a symbolic link is refused with a
// [*SandboxPathError] naming the canonical path to write instead. Only the system
// locations and the interpreters and loaders below are followed through links, and only
// through links that root alone could have made or changed (the link and every directory
// on the way to it owned by root, writable by no group or other user).
//
// What start-up derives from the executable cannot be chosen by it: an interpreter or
// loader that Exec does not grant must be a system program — a regular file (never a
// directory) owned by root, readable and executable by everyone, writable by no one
// else, in directories owned by root and writable by no one else — or Start refuses it,
// naming it. The
// installation prefix of an interpreter in a "bin" directory (the parent of that "bin":
// pyenv, /opt/...) becomes readable only when env(1) found that interpreter by its bare
// name on the adapter's PATH ([Config].Env, the host's choice) and it is such a system
// program, and never when the prefix is "/", /usr, /usr/local, /home, /root or a home
// directory of /etc/passwd; a path written in the "#!" line never adds a read grant.
// [Supervision].Derived lists every grant derived this way.
//
// Enforcement (Linux): Landlock for files, TCP ports, abstract Unix sockets and signals;
// a seccomp filter for socket families and the refused system calls; both applied, with
// no_new_privs and after every capability is dropped, by a launcher stage that then
// executes the adapter (see the package documentation), so no thread of the host is
// ever restricted or shares the adapter's Landlock domain. When a requested
// restriction cannot be enforced, Start fails with an error wrapping [errors.ErrUnsupported]
// that names what is missing, unless BestEffort is set: the adapter then starts without
// it and [Tree.Supervision] lists the gap in Dropped. Windows and macOS enforce nothing
// yet (the error says so).
type Sandbox struct {
	// Read lists files and directories (each with everything beneath it) the adapter may
	// read. Paths must be absolute, exist and go through no symbolic link.
	Read []string
	// Write lists files and directories the adapter may read, write, create and remove
	// entries in (no device nodes). Write implies Read.
	Write []string
	// Exec lists programs (or directories of programs) the adapter may execute; they
	// are readable too.
	Exec []string
	// Network grants the whole network: every socket family and port. It overrides
	// ConnectPorts.
	Network bool
	// ConnectPorts lists TCP ports the adapter may connect to, on any address (IPv4 or
	// IPv6); other TCP connections, binding any port, UDP and raw sockets stay refused.
	ConnectPorts []uint16
	// UnixSockets lets the adapter create Unix sockets, and so connect to any pathname
	// Unix socket it can name (Landlock up to ABI 7 cannot limit that by path) — the
	// daemon's control socket included. Abstract sockets outside its own sandbox stay
	// unreachable.
	UnixSockets bool
	// Inotify lets the adapter create inotify instances (inotify_init1), which count
	// against its user's fs.inotify.max_user_instances (128 by default), shared with the
	// host: an adapter holding them all leaves the host, and every other program of that
	// user, unable to watch files. Without it the seccomp filter refuses inotify_init1
	// and inotify_init with EPERM (fanotify is refused always).
	Inotify bool
	// BestEffort starts the adapter even when part of the policy cannot be enforced on
	// this system, and reports what is missing in Supervision.Dropped: one entry for each
	// Landlock right the kernel's ABI lacks (docs/containment.md lists them), each also
	// logged at warning level. Without it, any of them refuses the start.
	BestEffort bool
}

// validate checks the policy's paths: absolute, and clean.
func (s *Sandbox) validate() error {
	for _, l := range []struct {
		name  string
		paths []string
	}{{"Read", s.Read}, {"Write", s.Write}, {"Exec", s.Exec}} {
		for _, p := range l.paths {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("sandbox: %s: %q is not an absolute path", l.name, p)
			}
		}
	}
	if slices.Contains(s.ConnectPorts, 0) {
		return errors.New("sandbox: ConnectPorts: port 0 is not a port")
	}
	return nil
}

// SandboxPathError refuses a [Sandbox] Read, Write or Exec path that goes through a
// symbolic link. A sandbox resolves its grants once, opening each without following
// links, so that a link an adapter can write (in a directory another adapter may write)
// cannot redirect a grant between two starts; the policy names the file or directory
// itself, and Canonical is what to write instead. It matches [ErrInvalidConfig].
type SandboxPathError struct {
	// Field is "Read", "Write" or "Exec".
	Field string
	// Path is the path as the policy gives it.
	Path string
	// Link is the component of Path that is a symbolic link.
	Link string
	// Canonical is Path with every link resolved: the path to write; "" when it could
	// not be resolved (a dangling link).
	Canonical string
}

func (e *SandboxPathError) Error() string {
	msg := "sandbox: " + e.Field + ": " + e.Path + " goes through the symbolic link " + e.Link
	if e.Canonical == "" {
		return msg + ", which resolves to nothing; grants are never followed through links"
	}
	return msg + "; grants are never followed through links: write its canonical path " + e.Canonical
}

// Unwrap returns [ErrInvalidConfig].
func (e *SandboxPathError) Unwrap() error { return ErrInvalidConfig }

// SandboxError reports that a sandboxed start failed in the launcher stage (Linux):
// after the fork, while the sandbox was being applied to the new process or the adapter
// executed under it. The adapter never ran. Start returns it inside a [*LaunchError],
// which also matches [ErrStart].
type SandboxError struct {
	// Step names what failed: "enforcing the Landlock ruleset", "installing the seccomp
	// filter", "dropping capabilities", "executing the adapter", "the launcher stage"
	// (it ended before executing the adapter), ...
	Step string
	// Err is the cause; errors.Is matches the kernel's errno through it.
	Err error
}

func (e *SandboxError) Error() string { return "sandbox launcher: " + e.Step + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *SandboxError) Unwrap() error { return e.Err }
