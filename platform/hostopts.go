package platform

import (
	"slices"
	"sync"
)

// HostOptions are the choices a host makes for the whole process: what they change is
// not confined to one adapter, so the library never makes them on its own behalf. Set
// them with [SetHostOptions] before the first [Start]. The zero value is the default.
type HostOptions struct {
	// KeepInheritedFDs leaves the host's file descriptors as they are. By default
	// (false) Start sets close-on-exec, before it forks an adapter, on every descriptor
	// >= 3 of the host that lacks it: such descriptors were inherited from the host's own
	// parent or opened by C code (Go opens all of its own close-on-exec), and would
	// otherwise leak into every adapter. That change is process-wide: a host that later
	// re-executes itself (syscall.Exec) or starts other programs counting on such a
	// descriptor being inherited loses it. [MarkedCloseOnExec] lists what was changed.
	// Descriptors handed to a child through exec.Cmd.ExtraFiles are duplicated there
	// and not affected either way. With true, an inherited descriptor the host has not
	// marked itself leaks into each adapter it starts.
	KeepInheritedFDs bool
	// ChildSubreaper makes the host process a child subreaper (Linux
	// PR_SET_CHILD_SUBREAPER), a fallback for hosts that get no PID namespace: a
	// descendant of an adapter whose parent exits (a double-forked setsid daemon) is
	// re-parented to the host instead of to init, so it stays visible as the host's
	// child (ppid = the host) and the host may kill it. Trees started while it is set
	// report [MechSubreaper]. Close reaps the tree's processes that were re-parented to
	// the host and have ended, where it knows them by pid and start time: every member of
	// the tree's cgroup at Kill, and what the process-group walk saw; Kill does not kill a
	// re-parented process the walk never saw (it cannot be told from the host's own
	// children), so it finds no more than without the option. It is process-wide:
	// orphaned descendants of any child of the host, not only of adapters, become the
	// host's children, and the host must reap the others itself (Go does not); a host's
	// own children and re-parented ones look alike, so without a cgroup Verify still
	// cannot prove the end of a tree. A PID namespace keeps its orphans inside (its init
	// reaps them), so it is unaffected. Other platforms return an error matching errors.ErrUnsupported for true.
	ChildSubreaper bool
}

var hostOpts struct {
	mu     sync.Mutex
	o      HostOptions
	marked []int // descriptors set close-on-exec by Start, in order
}

// SetHostOptions sets the process-wide options for every later [Start]. Setting
// ChildSubreaper (or clearing it) takes effect at once; an error leaves the options
// unchanged.
func SetHostOptions(o HostOptions) error {
	hostOpts.mu.Lock()
	defer hostOpts.mu.Unlock()
	if o.ChildSubreaper != hostOpts.o.ChildSubreaper {
		if err := setSubreaper(o.ChildSubreaper); err != nil {
			return err
		}
	}
	hostOpts.o = o
	return nil
}

// currentHostOptions returns the options set by SetHostOptions (the zero value until
// then).
func currentHostOptions() HostOptions {
	hostOpts.mu.Lock()
	defer hostOpts.mu.Unlock()
	return hostOpts.o
}

// MarkedCloseOnExec lists the descriptors of this process that Start has set
// close-on-exec so far (see [HostOptions].KeepInheritedFDs), in the order it did. A
// descriptor number may since have been closed and reused.
func MarkedCloseOnExec() []int {
	hostOpts.mu.Lock()
	defer hostOpts.mu.Unlock()
	return slices.Clone(hostOpts.marked)
}

// noteMarked records descriptors set close-on-exec by Start.
func noteMarked(fds []int) {
	if len(fds) == 0 {
		return
	}
	hostOpts.mu.Lock()
	hostOpts.marked = append(hostOpts.marked, fds...)
	hostOpts.mu.Unlock()
}
