package platform

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is used through its three system calls and x/sys/unix's definitions of the
// kernel's structures, not through a library: github.com/landlock-lsm/go-landlock's
// low-level package links kernel.org/.../libcap/psx, which in a cgo build wraps
// pthread_create for the whole program — a process-wide change no host linking this
// package chose — and its high-level Restrict functions restrict every thread of the
// process, the host's included.

// Landlock rule types and access rights this file needs beyond x/sys/unix.
const (
	landlockRuleNetPort = 2
	// The filesystem rights of each ABI version: 1 has the first 13, 2 adds REFER, 3
	// TRUNCATE, 5 IOCTL_DEV.
	llFSv1 = 1<<13 - 1
	// Rights that apply to a regular file; directory rights on a file are refused.
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	llRead  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llExec  = llRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	llWrite = llRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// llDevice is what /dev/null gets: read, write, and its ioctls (isatty probes).
	llDevice = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// landlockNetPortAttr is struct landlock_net_port_attr.
type landlockNetPortAttr struct {
	allowed uint64
	port    uint64
}

// landlockABI returns the kernel's Landlock ABI version, or 0 with the reason.
func landlockABI() (int, error) {
	if landlockABIHook != nil {
		return landlockABIHook()
	}
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case e == unix.ENOSYS:
		return 0, errors.New("the kernel has no Landlock (CONFIG_SECURITY_LANDLOCK)")
	case e == unix.EOPNOTSUPP:
		return 0, errors.New("the kernel has Landlock disabled (add landlock to the lsm= boot parameter)")
	case e != 0:
		return 0, fmt.Errorf("landlock: %w", e)
	}
	return int(v), nil
}

// landlockABIHook, when set (tests), stands for the kernel's answer to landlockABI.
var landlockABIHook func() (int, error)

// handledFS is every filesystem right Landlock of version abi knows.
func handledFS(abi int) uint64 {
	h := uint64(llFSv1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// ruleset is a Landlock ruleset under construction.
type ruleset struct {
	fd int
	fs uint64 // handled filesystem rights
}

// newRuleset creates a ruleset handling every filesystem right of abi, TCP bind and
// connect when tcp, and the abstract-socket and signal scopes when scope.
func newRuleset(abi int, tcp, scope bool) (*ruleset, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(abi)}
	size := unsafe.Offsetof(attr.Handled_access_net)
	if tcp {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size = unsafe.Offsetof(attr.Scoped)
	}
	if scope {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Offsetof(attr.Quiet_access_fs)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return nil, fmt.Errorf("creating the Landlock ruleset: %w", e)
	}
	return &ruleset{fd: int(fd), fs: attr.Handled_access_fs}, nil
}

// addGrant allows g.access beneath the file or directory g's descriptor was opened on
// (a file: only the rights that apply to files). The rule is added by that descriptor:
// g's path is never opened again.
func (r *ruleset) addGrant(g grant) error {
	access := g.access
	if !g.isDir() {
		access &= llFileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access & r.fs, Parent_fd: int32(g.fd)}
	if attr.Allowed_access == 0 {
		return nil
	}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock rule for %s: %w", g.path, e)
	}
	return nil
}

// addConnectPort allows TCP connect to port.
func (r *ruleset) addConnectPort(port uint16) error {
	attr := landlockNetPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), landlockRuleNetPort, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock rule for TCP port %d: %w", port, e)
	}
	return nil
}

func (r *ruleset) close() { unix.Close(r.fd) }
