package platform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Sentinel causes of a [LaunchError]; test with errors.Is. On an operating system
// without process tree supervision, Start returns an error matching
// errors.ErrUnsupported.
var (
	// ErrNotAbsolute: Config.Path is not an absolute path (refused, never resolved).
	// discovery.ErrNotAbsolute is the same value.
	ErrNotAbsolute = sentinel.ErrNotAbsolute
	// ErrNotFound: nothing exists at Config.Path. discovery.ErrNotFound, for a name no
	// directory holds, is the same value.
	ErrNotFound = sentinel.ErrNotFound
	// ErrNotRegular: Config.Path names a directory, device, pipe or other non-regular file.
	ErrNotRegular = sentinel.ErrNotRegular
	// ErrNotExecutable: the file cannot be executed as an adapter: it has no execute
	// permission (POSIX), or, on Windows, its path is not an explicit ".exe" (no .bat,
	// .cmd, .com, .lnk, no alternate data stream, no trailing dot or space).
	ErrNotExecutable = errors.New("adapter file is not executable")
	// ErrInvalidConfig: a Config field other than Path is unusable (e.g. a relative Dir).
	ErrInvalidConfig = errors.New("invalid adapter process configuration")
	// ErrStart: the operating system refused to create the process; the LaunchError
	// also wraps the system error.
	ErrStart = errors.New("adapter process could not be started")
)

// errNotExe is the Windows case of ErrNotExecutable, which it matches.
var errNotExe = fmt.Errorf("%w: the path is not an explicit .exe", ErrNotExecutable)

// ErrUnverified is matched (errors.Is) by every [*UnverifiedError].
var ErrUnverified = errors.New("process tree end not verified")

// ErrLimitUnsupported is matched (errors.Is) by a [*LimitError].
var ErrLimitUnsupported = errors.New("resource limit not supported")

// errClosed is returned by operations on a Tree after Close: runtime.ErrClosed, the
// module's one "closed by the host" error, matches it.
var errClosed = sentinel.ErrClosed

// errNilContext refuses a nil context: runtime.ErrNilContext matches it.
var errNilContext = sentinel.ErrNilContext

// LaunchError reports why Start did not start an adapter. Err is one of the sentinel
// errors above, possibly joined with the underlying system error, so errors.Is works with
// both (e.g. errors.Is(err, ErrStart) and errors.Is(err, syscall.ENOEXEC)).
type LaunchError struct {
	Path string
	Err  error
}

func (e *LaunchError) Error() string {
	return "platform: launch " + strconv.Quote(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *LaunchError) Unwrap() error { return e.Err }

// UnverifiedError reports that the end of a whole process tree could not be confirmed:
// the context ended before proof arrived, or the mechanism in use cannot give proof at all.
// A caller that receives it must treat the tree as possibly still running.
type UnverifiedError struct {
	// Mechanism is what supervised the tree.
	Mechanism Mechanism
	// Pids are the survivors known at the time (may be empty: unknown is not none).
	Pids []int
	// Reason says why no proof could be had.
	Reason string
}

func (e *UnverifiedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "platform: process tree end not verified (%s): %s", e.Mechanism, e.Reason)
	if len(e.Pids) > 0 {
		fmt.Fprintf(&b, "; known survivors %v", e.Pids)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnverified) true.
func (e *UnverifiedError) Is(target error) bool { return target == ErrUnverified }

// LimitError reports requested [Resources] that the platform could not apply. The process
// was started without them; see [Tree.LimitErr].
type LimitError struct {
	// Limits names each limit not applied: "memory", "processes".
	Limits []string
	// Reason says why (e.g. the controller is not delegated to the parent cgroup).
	Reason string
}

func (e *LimitError) Error() string {
	return "platform: resource limits " + strings.Join(e.Limits, ", ") + " not applied: " + e.Reason
}

// Is makes errors.Is(err, ErrLimitUnsupported) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimitUnsupported }

// ErrMemoryLimit is reported by [Tree.LimitHit] when the tree hit its memory limit
// ([Resources.MemoryBytes]) and the kernel killed a process of it for that.
var ErrMemoryLimit = errors.New("process tree killed at its memory limit")
