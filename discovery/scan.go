package discovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"
)

// checkModes says whether permission bits mean anything on the running OS. On
// Windows Go reports synthetic bits (no execute bits, write for everyone unless
// read-only), so the NotExecutable and WorldWritable checks are skipped there;
// ACLs are not inspected.
const checkModes = runtime.GOOS != "windows"

// maxLinkHops bounds how many symbolic links Scan follows from one entry.
const maxLinkHops = 40

// Adapter is one executable file taken by Scan.
type Adapter struct {
	Name    string
	Version *version.Version
	// Path is the absolute, cleaned path of the file inside the scanned
	// directory (a symbolic link is not resolved here).
	Path string
	// Dir is the adapter's package directory: the scanned directory that
	// directly contains Path (absolute, cleaned, as given to Scan). A symbolic
	// link is only taken when it resolves inside Dir, so Dir always covers the
	// real file. A host reserves Dir while a process started from Path may
	// still be running.
	Dir string
	// Resolved is Path with every symbolic link resolved (in the path of Dir
	// too): the file whose type and permissions were checked.
	Resolved string
}

// String returns "NAME VERSION (PATH)".
func (a Adapter) String() string {
	v := "<nil>"
	if a.Version != nil {
		v = a.Version.String()
	}
	return a.Name + " " + v + " (" + a.Path + ")"
}

// Result is what Scan found.
type Result struct {
	// Adapters sorted by Name, then by Version, newest first.
	Adapters []Adapter
	// Rejected holds every directory entry not taken, in scan order: the
	// directories in argument order, the entries of each in lexical order.
	Rejected []Rejected
}

// Options adjusts Scan. The zero value and a nil *Options are valid.
type Options struct {
	// GOOS selects the naming rule: "windows" requires the ".exe" suffix,
	// anything else forbids it. "" means runtime.GOOS. Permission checks
	// always follow the OS actually running.
	GOOS string
	// AllowGroupWritable trusts the group of each scanned directory, for
	// deployments where several users of one group install adapters: a file or
	// directory writable by its group is taken, and so is one owned by another
	// user when its group is the scanned directory's group. Every member of
	// that group can then replace the adapters a host runs (see the package
	// documentation). World-writable entries are refused all the same.
	AllowGroupWritable bool
}

func (o *Options) allowGroup() bool { return o != nil && o.AllowGroupWritable }

func (o *Options) goos() string {
	if o == nil {
		return targetOS("")
	}
	return targetOS(o.GOOS)
}

func targetOS(goos string) string {
	if goos == "" {
		return runtime.GOOS
	}
	return goos
}

// scanDir is a validated directory argument.
type scanDir struct {
	clean    string // absolute, cleaned, as given
	resolved string // with symbolic links resolved
	trust    trust  // who the directory and what it holds may be written by
	// untrusted is why the directory itself is not trusted (Reason 0: it is).
	untrusted Rejected
}

// Scan looks for adapters directly inside each of dirs (not in
// subdirectories), following the convention in the package documentation.
// Every directory must be absolute, exist and be a directory, and none may be
// given twice; otherwise Scan returns a *DirError and scans nothing. A nil
// opts is valid. Scan checks ctx between entries and returns ctx.Err() when it
// is done.
func Scan(ctx context.Context, opts *Options, dirs ...string) (*Result, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sds, err := checkDirs(dirs, opts.allowGroup())
	if err != nil {
		return nil, err
	}
	goos := opts.goos()
	res := &Result{Adapters: []Adapter{}, Rejected: []Rejected{}}
	taken := make(map[string][]Adapter)
	for _, sd := range sds {
		entries, err := os.ReadDir(sd.clean)
		if err != nil {
			return nil, &DirError{Dir: sd.clean, Reason: errDirUnreadable, Err: err}
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			a, rej := examine(sd, e.Name(), goos)
			if rej == nil {
				rej = duplicateOf(taken[a.Name], a)
			}
			if rej != nil {
				res.Rejected = append(res.Rejected, *rej)
				continue
			}
			res.Adapters = append(res.Adapters, a)
			taken[a.Name] = append(taken[a.Name], a)
		}
	}
	slices.SortFunc(res.Adapters, compareAdapters)
	return res, nil
}

// compareAdapters orders by name ascending, then version descending.
func compareAdapters(a, b Adapter) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return b.Version.Compare(a.Version)
}

func checkDirs(dirs []string, allowGroup bool) ([]scanDir, error) {
	sds := make([]scanDir, 0, len(dirs))
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, &DirError{Dir: d, Reason: ErrNotAbsolute}
		}
		clean := filepath.Clean(d)
		fi, err := os.Stat(clean)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &DirError{Dir: d, Reason: errDirNotFound, Err: err}
		case err != nil:
			return nil, &DirError{Dir: d, Reason: errDirUnreadable, Err: err}
		case !fi.IsDir():
			return nil, &DirError{Dir: d, Reason: errNotDirectory}
		}
		resolved, err := filepath.EvalSymlinks(clean)
		if err != nil {
			return nil, &DirError{Dir: d, Reason: errDirUnreadable, Err: err}
		}
		if seen[resolved] {
			return nil, &DirError{Dir: d, Reason: errDirRepeated}
		}
		seen[resolved] = true
		sd := scanDir{clean: clean, resolved: resolved, trust: newTrust(fi, allowGroup)}
		if r, detail := sd.trust.check(fi); r != 0 {
			sd.untrusted = Rejected{Reason: r, Detail: "directory " + clean + " " + detail}
		}
		sds = append(sds, sd)
	}
	return sds, nil
}

// examine applies the rules, in the documented order, to one entry of sd.
func examine(sd scanDir, base, goos string) (Adapter, *Rejected) {
	p := filepath.Join(sd.clean, base)
	reject := func(r Reason, detail string, err error) (Adapter, *Rejected) {
		return Adapter{}, &Rejected{Path: p, Reason: r, Detail: detail, Err: err}
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return reject(Unreadable, "", err)
	}
	resolved := filepath.Join(sd.resolved, base)
	isLink := fi.Mode()&fs.ModeSymlink != 0
	if isLink {
		var rej *Rejected
		if resolved, rej = followLink(sd, p); rej != nil {
			return Adapter{}, rej
		}
		if fi, err = os.Stat(resolved); err != nil {
			return reject(Unreadable, "", err)
		}
	}
	if !fi.Mode().IsRegular() {
		return reject(NotRegular, "mode "+fi.Mode().String(), nil)
	}
	name, v, err := ParseFileName(base, goos)
	if err != nil {
		var nr *Rejected
		if errors.As(err, &nr) {
			return reject(nr.Reason, nr.Detail, nr.Err)
		}
		return reject(BadName, err.Error(), err)
	}
	if checkModes {
		if sd.untrusted.Reason != 0 {
			return reject(sd.untrusted.Reason, sd.untrusted.Detail, nil)
		}
		if isLink {
			if rej := checkLinkDirs(sd, p, resolved); rej != nil {
				return Adapter{}, rej
			}
		}
		if r, detail := sd.trust.check(fi); r != 0 {
			return reject(r, "file "+detail, nil)
		}
		if fi.Mode().Perm()&0o111 == 0 {
			return reject(NotExecutable, "mode "+fi.Mode().String(), nil)
		}
	}
	return Adapter{Name: name, Version: v, Path: p, Dir: sd.clean, Resolved: resolved}, nil
}

// followLink checks that every hop of the link chain starting at p, and the
// fully resolved file, lie inside sd, and returns the resolved path.
func followLink(sd scanDir, p string) (string, *Rejected) {
	reject := func(r Reason, detail string, err error) (string, *Rejected) {
		return "", &Rejected{Path: p, Reason: r, Detail: detail, Err: err}
	}
	cur := p
	for hops := 0; ; hops++ {
		if hops == maxLinkHops {
			return reject(Unreadable, fmt.Sprintf("more than %d symbolic links", maxLinkHops), nil)
		}
		fi, err := os.Lstat(cur)
		if err != nil {
			return reject(Unreadable, "", err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return reject(Unreadable, "", err)
		}
		next := filepath.Clean(target)
		if !filepath.IsAbs(target) {
			next = filepath.Join(filepath.Dir(cur), target)
		}
		if !within(next, sd.clean) && !within(next, sd.resolved) {
			return reject(LinkLeavesDir, cur+" points to "+target, nil)
		}
		cur = next
	}
	final, err := filepath.EvalSymlinks(p)
	if err != nil {
		return reject(Unreadable, "", err)
	}
	if !within(final, sd.resolved) {
		return reject(LinkLeavesDir, "resolves to "+final, nil)
	}
	return final, nil
}

// checkLinkDirs rejects a link whose resolved file sits in a directory below the
// scanned one that others may write to (the scanned directory is checked apart).
func checkLinkDirs(sd scanDir, p, resolved string) *Rejected {
	for d := filepath.Dir(resolved); d != sd.resolved && within(d, sd.resolved); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return &Rejected{Path: p, Reason: Unreadable, Err: err}
		}
		if r, detail := sd.trust.check(fi); r != 0 {
			return &Rejected{Path: p, Reason: r, Detail: "directory " + d + " " + detail}
		}
	}
	return nil
}

// within reports whether p is dir or lies below it, lexically.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// duplicateOf rejects a when an adapter with an equal version is among
// sameName, the adapters of that name already taken.
func duplicateOf(sameName []Adapter, a Adapter) *Rejected {
	for _, t := range sameName {
		if t.Version.Equal(a.Version) {
			return &Rejected{Path: a.Path, Reason: Duplicate, Detail: "same name and version as " + t.Path}
		}
	}
	return nil
}
