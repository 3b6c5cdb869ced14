package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adapterkit/adapterkit/platform"
)

// GrantOverlapError is the refusal of two adapters of one registry of which one may
// write what the other is granted: Grant, a grant of adapter Adapter (a path of its
// sandbox's Read, Write or Exec, or its executable file), lies beneath Write (or is
// Write, for an executable), and Write is a Sandbox.Write path of another adapter,
// Writer. Writer could replace what Adapter is granted (a directory by a symbolic link
// or by another of its directories, a file it reads or executes) and so widen
// Adapter's access at its next start. errors.Is(err, platform.ErrInvalidConfig) is
// true.
//
// A grant equal to the other's write grant is a directory (or file) the two share, and
// is accepted: the writer cannot replace the grant itself without a write grant on its
// parent (which the rule refuses in turn), and the grant opens nothing the writer
// cannot already write.
//
// A start of either adapter is refused (see Config.Sandboxes). The paths are the
// configured ones; the comparison also takes them with their symbolic links resolved.
type GrantOverlapError struct {
	// Adapter is the adapter whose grant lies inside the other's write grant; Grant
	// is that grant, and Executable says it is the adapter's executable file.
	Adapter, Grant string
	Executable     bool
	// Writer is the adapter that may write it, Write that write grant.
	Writer, Write string
}

func (e *GrantOverlapError) Error() string {
	what := "grant"
	if e.Executable {
		what = "executable"
	}
	return "registry: adapter " + e.Adapter + "'s " + what + " " + e.Grant + " lies inside adapter " +
		e.Writer + "'s write grant " + e.Write + ": refused (a write grant must not hold another adapter's grants)"
}

// Unwrap returns platform.ErrInvalidConfig.
func (e *GrantOverlapError) Unwrap() error { return platform.ErrInvalidConfig }

// CheckGrants reports, as a *GrantOverlapError, the first pair of adapters named in
// c.Sandboxes (each with a non-nil sandbox) of which one has a grant beneath a
// Sandbox.Write path of the other (see GrantOverlapError for a grant equal to it). It is the part of the rule a
// configuration decides alone, for a host to refuse it at once; the rest (the
// adapters' executables, the adapters Sandbox applies to) depends on the files found
// and is checked at every start. A nil Config has no overlap.
func (c *Config) CheckGrants() error {
	if c == nil {
		return nil
	}
	names := make([]string, 0, len(c.Sandboxes))
	for n, sb := range c.Sandboxes {
		if sb != nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	adapters := make([]grantSet, len(names))
	for i, n := range names {
		adapters[i] = newGrantSet(n, c.Sandboxes[n], nil)
	}
	for i := range adapters {
		for j := i + 1; j < len(adapters); j++ {
			if err := overlap(&adapters[i], &adapters[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// grantPath is one grant of an adapter: as configured (cleaned) and with its symbolic
// links resolved ("" when resolving failed: a missing path compares as written).
type grantPath struct {
	path, resolved string
	executable     bool
}

// grantSet is what one adapter is granted and may write.
type grantSet struct {
	name   string
	grants []grantPath // everything it is granted, its executables included
	writes []grantPath // its Sandbox.Write paths
}

// newGrantSet returns the grants of the adapter named name under sb (nil: it is not
// contained, and only its executables are grants) for the executables exes.
func newGrantSet(name string, sb *platform.Sandbox, exes []string) grantSet {
	g := grantSet{name: name}
	for _, p := range exes {
		g.grants = append(g.grants, resolveGrant(p, true))
	}
	if sb == nil {
		return g
	}
	for _, list := range [][]string{sb.Read, sb.Write, sb.Exec} {
		for _, p := range list {
			g.grants = append(g.grants, resolveGrant(p, false))
		}
	}
	for _, p := range sb.Write {
		g.writes = append(g.writes, resolveGrant(p, false))
	}
	return g
}

func resolveGrant(p string, executable bool) grantPath {
	gp := grantPath{path: filepath.Clean(p), executable: executable}
	if r, err := filepath.EvalSymlinks(gp.path); err == nil && r != gp.path {
		gp.resolved = r
	}
	return gp
}

// overlap returns the refusal of a and b when a grant of either lies inside a write
// grant of the other, else nil.
func overlap(a, b *grantSet) error {
	if err := inside(a, b); err != nil {
		return err
	}
	return inside(b, a)
}

// inside returns the refusal of a grant of a that lies inside a write grant of w.
func inside(a, w *grantSet) error {
	for _, wp := range w.writes {
		for _, g := range a.grants {
			if within(g, wp) {
				return &GrantOverlapError{Adapter: a.name, Grant: g.path, Executable: g.executable, Writer: w.name, Write: wp.path}
			}
		}
	}
	return nil
}

// within reports whether grant g lies beneath write grant w, or is w and an
// executable, comparing every form of each (as configured, and resolved).
func within(g, w grantPath) bool {
	for _, gp := range []string{g.path, g.resolved} {
		for _, wp := range []string{w.path, w.resolved} {
			if gp != "" && wp != "" && beneath(gp, wp) && (gp != wp || g.executable) {
				return true
			}
		}
	}
	return false
}

// beneath reports whether the clean absolute path p is dir or lies beneath it.
func beneath(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(os.PathSeparator)) {
		dir += string(os.PathSeparator)
	}
	return strings.HasPrefix(p, dir)
}

// hasWrites reports whether any sandbox of c grants a write: without one, no adapter
// can hold another's grants and the start-time check has nothing to do.
func (c *Config) hasWrites() bool {
	if c.Sandbox != nil && len(c.Sandbox.Write) > 0 {
		return true
	}
	for _, sb := range c.Sandboxes {
		if sb != nil && len(sb.Write) > 0 {
			return true
		}
	}
	return false
}

// checkGrants refuses the start of the executable path of adapter name when a grant
// of it lies inside a write grant of another adapter the registry knows, or a grant of
// another such adapter lies inside one of its own: the adapters discovered in the
// directories (every version), those the registry started (by any path), and those
// named in Config.Sandboxes. Every start asks it, restarts and upgrades included, so
// the rule holds against adapters not started yet; a start records the adapter
// before it compares, so of two concurrent starts the later sees the earlier.
func (r *Registry) checkGrants(path, name string) error {
	if !r.writes {
		return nil
	}
	r.mu.Lock()
	scan := r.scan
	r.mu.Unlock()
	if scan == nil && len(r.cfg.Dirs) > 0 {
		// Nothing opened by name yet: the adapters of the directories are known only
		// after a scan. A scan that fails leaves the others known.
		if res, err := r.Discover(r.closing); err == nil {
			scan = res
		}
	}
	exes := make(map[string][]string) // by name
	r.grantMu.Lock()
	if r.started[name] == nil {
		r.started[name] = make(map[string]bool)
	}
	r.started[name][path] = true
	for n, paths := range r.started {
		for p := range paths {
			exes[n] = append(exes[n], p)
		}
	}
	r.grantMu.Unlock()
	if scan != nil {
		for _, a := range scan.Adapters {
			exes[a.Name] = append(exes[a.Name], a.Path)
		}
	}
	for n := range r.cfg.Sandboxes {
		if _, ok := exes[n]; !ok {
			exes[n] = nil
		}
	}
	self := newGrantSet(name, r.sandboxOf(name), uniq(exes[name]))
	others := make([]string, 0, len(exes))
	for n := range exes {
		if n != name {
			others = append(others, n)
		}
	}
	slices.Sort(others)
	for _, n := range others {
		other := newGrantSet(n, r.sandboxOf(n), uniq(exes[n]))
		if err := overlap(&self, &other); err != nil {
			return err
		}
	}
	return nil
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
