package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// archSCCases are amd64's path-based forms of the file calls (see scCases).
var archSCCases = []scCase{
	{"inotify_init", "none", unix.EPERM, "ok", inotifyInit},
	{"inotify_init granted", "inotify", 0, "ok", inotifyInit},
	{"chmod", "none", unix.EPERM, "ok", func(e *scEnv) error { return sys(unix.SYS_CHMOD, cstr(e.path("f")), 0o4755) }},
	{"chown", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_CHOWN, cstr(e.path("f")), uintptr(os.Getuid()), uintptr(os.Getgid()))
	}},
	{"lchown", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_LCHOWN, cstr(e.path("f")), uintptr(os.Getuid()), uintptr(os.Getgid()))
	}},
	{"utime", "none", unix.EPERM, "ok", func(e *scEnv) error { return sys(unix.SYS_UTIME, cstr(e.path("f")), 0) }},
	{"utimes", "none", unix.EPERM, "ok", func(e *scEnv) error { return sys(unix.SYS_UTIMES, cstr(e.path("f")), 0) }},
	{"futimesat", "none", unix.EPERM, "ok", func(e *scEnv) error {
		return sys(unix.SYS_FUTIMESAT, atCWD, cstr(e.path("f")), 0)
	}},
	{"open O_CREAT 04755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_OPEN, cstr(e.path("suid-open")), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755); err != nil {
			return err
		}
		return setID(e.path("suid-open"), unix.S_ISUID)
	}},
	{"open O_CREAT 0644", "none", 0, "ok", func(e *scEnv) error {
		return sys(unix.SYS_OPEN, cstr(e.path("plain-open")), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	}},
	{"creat 06755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_CREAT, cstr(e.path("suid-creat")), 0o6755); err != nil {
			return err
		}
		return setID(e.path("suid-creat"), unix.S_ISUID|unix.S_ISGID)
	}},
	{"mkdir 02755", "none", unix.EPERM, "ok", func(e *scEnv) error { return sys(unix.SYS_MKDIR, cstr(e.path("sgid-mkdir")), 0o2755) }},
	{"mknod S_IFREG 04755", "none", unix.EPERM, "ok", func(e *scEnv) error {
		if err := sys(unix.SYS_MKNOD, cstr(e.path("suid-mknod")), unix.S_IFREG|0o4755, 0); err != nil {
			return err
		}
		return setID(e.path("suid-mknod"), unix.S_ISUID)
	}},
}

// inotifyInit creates an inotify instance with amd64's older call, and closes it.
func inotifyInit(*scEnv) error {
	fd, _, errno := unix.Syscall(unix.SYS_INOTIFY_INIT, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return unix.Close(int(fd))
}
