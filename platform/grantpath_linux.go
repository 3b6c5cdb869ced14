package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// How a sandbox's paths become Landlock rules. Every path that becomes a rule is opened
// once, one component at a time from "/", never following a symbolic link
// (openNoSymlinks); that descriptor is what every check (fstat: type, owner, mode) looks
// at and what landlock_add_rule receives. No grant is ever re-opened by name, so a
// contained adapter that can write beside a grant path (another adapter's directory, a
// "#!" interpreter's symbolic link) cannot redirect a grant between its check and its
// rule, nor between two starts.
//
// Where a path may go through symbolic links — the system locations (/bin on a merged
// /usr), a "#!" interpreter or PT_INTERP loader — resolveTrusted follows them only where
// no user but root could have placed or changed them; the canonical result is then
// opened without following links, so a link changed in between makes the open fail
// rather than grant anything unchecked. A policy path (Sandbox.Read, Write, Exec) must
// be canonical: one that goes through a link is refused with a *SandboxPathError naming
// the path to write instead.

// grant is one Landlock rule: a canonical path, opened once with O_PATH.
type grant struct {
	path   string
	fd     int
	st     unix.Stat_t
	access uint64
}

func (g *grant) isDir() bool     { return g.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (g *grant) isRegular() bool { return g.st.Mode&unix.S_IFMT == unix.S_IFREG }

// closeGrants closes the descriptors of the grants.
func closeGrants(lists ...[]grant) {
	for _, l := range lists {
		for _, g := range l {
			unix.Close(g.fd)
		}
	}
}

// symlinkError: a component of a path that must not go through symbolic links is one.
type symlinkError struct{ link string }

func (e *symlinkError) Error() string { return e.link + " is a symbolic link" }

// Unwrap makes errors.Is(err, unix.ELOOP) true.
func (e *symlinkError) Unwrap() error { return unix.ELOOP }

// openat2Missing records that the kernel (or a seccomp filter the host runs under) has
// no openat2: openStep then walks with openat and O_NOFOLLOW, which opens no symbolic
// link either.
var openat2Missing atomic.Bool

// openStep opens the single component name in dirfd with O_PATH, following no symbolic
// link, magic links (/proc) included. A name that is a symbolic link is opened as the
// link itself (O_PATH|O_NOFOLLOW); the caller fstat's it and refuses it.
func openStep(dirfd int, name string) (int, error) {
	for {
		var fd int
		var err error
		if !openat2Missing.Load() {
			fd, err = unix.Openat2(dirfd, name, &unix.OpenHow{
				Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			if err == unix.ENOSYS {
				openat2Missing.Store(true)
				continue
			}
		} else {
			fd, err = unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
}

// openNoSymlinks opens the absolute path with O_PATH one component at a time from "/",
// refusing (with a *symlinkError) any component that is a symbolic link. visit, if not
// nil, is called for "/" and each directory below it on the way, with the descriptor the
// next component is opened from and its fstat; an error from visit ends the walk. The
// caller closes the descriptor returned.
func openNoSymlinks(path string, visit func(dir string, fd int, st *unix.Stat_t) error) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	if !filepath.IsAbs(path) {
		return -1, st, fmt.Errorf("%q is not an absolute path", path)
	}
	path = filepath.Clean(path)
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, st, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	dir := "/"
	var names []string
	if path != "/" {
		names = strings.Split(path[1:], "/")
	}
	for i := 0; ; i++ {
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, st, &os.PathError{Op: "stat", Path: dir, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, st, &symlinkError{link: dir}
		}
		if i == len(names) {
			return fd, st, nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(fd)
			return -1, st, &os.PathError{Op: "open", Path: dir, Err: unix.ENOTDIR}
		}
		if visit != nil {
			if err := visit(dir, fd, &st); err != nil {
				unix.Close(fd)
				return -1, st, err
			}
		}
		next := filepath.Join(dir, names[i])
		nfd, err := openStep(fd, names[i])
		unix.Close(fd)
		if err == unix.ELOOP {
			return -1, st, &symlinkError{link: next}
		}
		if err != nil {
			return -1, st, &os.PathError{Op: "open", Path: next, Err: err}
		}
		fd, dir = nfd, next
	}
}

// maxSymlinks bounds the links resolveTrusted follows (the kernel's own bound).
const maxSymlinks = 40

// resolveTrusted returns path with every symbolic link resolved, following a link only
// where no user but root could have placed or changed it: the link is owned by root,
// and "/" and every directory up to the one holding it are owned by root and writable by
// no group or other user. A path without links is returned clean, whoever owns it.
func resolveTrusted(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%q is not an absolute path", path)
	}
	rest := strings.Split(path, "/")
	resolved := "/"
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			return "", &os.PathError{Op: "lstat", Path: next, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", &os.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		if st.Uid != 0 {
			return "", fmt.Errorf("the symbolic link %s is owned by uid %d, not root", next, st.Uid)
		}
		if err := rootOnlyDirs(resolved); err != nil {
			return "", fmt.Errorf("the symbolic link %s: %w", next, err)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}

// rootOnlyDirs checks that dir (canonical) and every directory above it are owned by
// root and writable by no group or other user.
func rootOnlyDirs(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return &os.PathError{Op: "lstat", Path: d, Err: err}
		}
		if err := rootOnlyDir(d, &st); err != nil {
			return err
		}
		if d == "/" {
			return nil
		}
	}
}

// rootOnlyDir checks one directory's fstat: a directory owned by root, writable by no
// group or other user.
func rootOnlyDir(dir string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != 0 || st.Mode&0o022 != 0 {
		return fmt.Errorf("its directory %s is not owned by root or is writable by others", dir)
	}
	return nil
}

// systemFile says why the file of st (at path) is not a system program: a regular file
// owned by root, writable by no group or other user, readable and executable by
// everyone.
func systemFile(path string, st *unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s is not a regular file", path)
	case st.Uid != 0:
		return fmt.Errorf("%s is owned by uid %d, not root", path, st.Uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%s is writable by its group or others", path)
	case st.Mode&0o005 != 0o005:
		return fmt.Errorf("%s is not readable and executable by everyone", path)
	}
	return nil
}

// openProgram opens the canonical path of a program of the exec chain and says, in
// sysErr, why it is not a system program (systemFile, and rootOnlyDir for every directory
// above it), all checked on the descriptors of the one walk. When prefix is one of those
// directories, pre is a grant of it (a duplicate of the walk's descriptor), else fd -1.
func openProgram(canonical, prefix string) (g grant, pre grant, sysErr, err error) {
	pre.fd = -1
	visit := func(dir string, fd int, st *unix.Stat_t) error {
		if sysErr == nil {
			sysErr = rootOnlyDir(dir, st)
		}
		if dir == prefix && pre.fd < 0 {
			dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
			if err != nil {
				return err
			}
			pre = grant{path: dir, fd: dup, st: *st, access: llRead}
		}
		return nil
	}
	fd, st, err := openNoSymlinks(canonical, visit)
	if err != nil {
		if pre.fd >= 0 {
			unix.Close(pre.fd)
			pre.fd = -1
		}
		return g, pre, nil, err
	}
	if sysErr == nil {
		sysErr = systemFile(canonical, &st)
	}
	return grant{path: canonical, fd: fd, st: st, access: llExec}, pre, sysErr, nil
}

// openPolicy opens a path of the policy's field (Read, Write, Exec) for a rule of
// access. It must name the file or directory itself: a path through a symbolic link is
// refused with a *SandboxPathError naming its canonical form.
func openPolicy(field, path string, access uint64) (grant, error) {
	fd, st, err := openNoSymlinks(path, nil)
	var sl *symlinkError
	if errors.As(err, &sl) {
		canonical, _ := filepath.EvalSymlinks(path)
		return grant{}, &SandboxPathError{Field: field, Path: path, Link: sl.link, Canonical: canonical}
	}
	if err != nil {
		return grant{}, fmt.Errorf("%s: %w", field, err)
	}
	return grant{path: filepath.Clean(path), fd: fd, st: st, access: access}, nil
}

// openOwn opens the adapter's own executable for its read and execute grant: path may be
// a symbolic link (users link adapters into a directory); its target, resolved once, is
// opened without following links and must be a regular file.
func openOwn(path string) (grant, error) {
	canonical, err := filepath.EvalSymlinks(path)
	if err != nil {
		return grant{}, fmt.Errorf("%w: sandbox: the adapter: %w", ErrInvalidConfig, err)
	}
	fd, st, err := openNoSymlinks(canonical, nil)
	if err != nil {
		return grant{}, fmt.Errorf("%w: sandbox: the adapter %s: %w", ErrInvalidConfig, path, err)
	}
	g := grant{path: canonical, fd: fd, st: st, access: llExec}
	if !g.isRegular() {
		unix.Close(fd)
		return grant{}, fmt.Errorf("%w: sandbox: the adapter %s (%s) is not a regular file", ErrInvalidConfig, path, canonical)
	}
	return g, nil
}

// openSystem opens a location of the default policy (a system path, /dev/null, the
// parent of the private temporary directory): links are followed by resolveTrusted only.
// ok is false when the location does not exist.
func openSystem(path string, access uint64) (g grant, ok bool, err error) {
	canonical, err := resolveTrusted(path)
	if err == nil {
		var fd int
		var st unix.Stat_t
		if fd, st, err = openNoSymlinks(canonical, nil); err == nil {
			return grant{path: canonical, fd: fd, st: st, access: access}, true, nil
		}
	}
	if errors.Is(err, unix.ENOENT) {
		return grant{}, false, nil
	}
	return grant{}, false, fmt.Errorf("%s: %w", path, err)
}

// reopen opens the regular file of g for reading, through its descriptor (not its name).
func (g *grant) reopen() (*os.File, error) {
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(g.fd), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", g.path, err)
	}
	return f, nil
}

// defaultGrants opens what every sandboxed adapter gets beyond its exec chain — the
// system locations (read), /dev/null (read, write, ioctls), its private temporary
// directory tmp (write) — and the policy's Read and Write paths. The caller closes them.
func defaultGrants(s *Sandbox, tmp string) (gs []grant, err error) {
	defer func() {
		if err != nil {
			closeGrants(gs)
			gs = nil
		}
	}()
	for _, p := range sandboxSystemPaths {
		g, ok, err := openSystem(p, llRead)
		if err != nil {
			return gs, err
		}
		if ok {
			gs = append(gs, g)
		}
	}
	null, ok, err := openSystem(os.DevNull, llDevice)
	if err == nil && ok && null.st.Mode&unix.S_IFMT != unix.S_IFCHR {
		unix.Close(null.fd)
		err = fmt.Errorf("%s (%s) is not a character device", os.DevNull, null.path)
	} else if err == nil && !ok {
		err = &os.PathError{Op: "open", Path: os.DevNull, Err: unix.ENOENT}
	}
	if err != nil {
		return gs, err
	}
	gs = append(gs, null)
	// The directory was created in the host's $TMPDIR, which may go through links of root.
	parent, err := resolveTrusted(filepath.Dir(tmp))
	if err != nil {
		return gs, fmt.Errorf("the temporary directory: %w", err)
	}
	fd, st, err := openNoSymlinks(filepath.Join(parent, filepath.Base(tmp)), nil)
	if err != nil {
		return gs, fmt.Errorf("the temporary directory: %w", err)
	}
	gs = append(gs, grant{path: tmp, fd: fd, st: st, access: llWrite})
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
		return gs, fmt.Errorf("the temporary directory %s is not a directory of this user", tmp)
	}
	for _, l := range []struct {
		field  string
		paths  []string
		access uint64
	}{{"Read", s.Read, llRead}, {"Write", s.Write, llWrite}} {
		for _, p := range l.paths {
			g, err := openPolicy(l.field, p, l.access)
			if err != nil {
				return gs, err
			}
			gs = append(gs, g)
		}
	}
	return gs, nil
}
