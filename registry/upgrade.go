package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Upgrade makes the handles a Registry opens by NAME[@CONSTRAINT] follow new versions
// of their adapter (Config.Upgrade; a nil Upgrade, the default, keeps the version
// first opened until the handle is closed). A handle opened by path never follows.
//
// A new version is looked for by [Registry.Rescan], called by the host when it
// chooses (adapterctl serve calls it when the directories change). It must match the
// handle's constraint — for a NAME without one, the major version first opened — be
// newer than the version serving, and have kept its size and modification time over
// Settle (a file still being written is left for a later rescan). The registry then
// starts it, runs the handshake and checks its catalog: it must offer every contract
// the handle's typed clients are bound to, or, with none bound, every service and
// method of the version serving at the same service versions (it may add, never
// remove). Only then do new
// calls go to it; calls in flight on the old version finish there (each within its
// deadline, at most the call deadline), and the old process tree is then closed and
// verified gone. A new version that fails to start, fails the handshake, breaks a
// contract or is not allowed by a pin is closed, the old one keeps serving, and the
// refusal is logged, kept in [Handle.Upgrades] and told to OnUpgrade, and recorded
// (see [Refusal], [Registry.Refused]): the same file (path, size, modification time
// and SHA-256) is not tried again, nor started by any other path, until it is
// replaced or [Registry.Retry] forgets it.
type Upgrade struct {
	// Allowed maps an adapter name to the hex SHA-256 digests its files may have: a
	// name listed here is pinned at every start (first open, restart, upgrade, open by
	// path), and a file of it with another digest is never executed but refused (see
	// [Refusal]); an open by NAME serves the newest version whose digest is listed. An
	// adapter whose serving file is pinned by path in Config.Pins upgrades only to a
	// file listed here or pinned by its path; a file pinned by path must match its pin,
	// pinned adapter or not. The digest is then checked again on the bytes executed.
	Allowed map[string][]string
	// Settle is how long a new file's size and modification time must stay the same
	// before it is started (default 1 s).
	Settle time.Duration
	// OnUpgrade, if set, is told of each upgrade tried, from the goroutine of Rescan,
	// and of each version refused at a handle's first open, from the goroutine of Open.
	OnUpgrade func(UpgradeEvent)
}

func (u *Upgrade) settle() time.Duration {
	if u.Settle > 0 {
		return u.Settle
	}
	return time.Second
}

// UpgradeEvent tells of one upgrade tried.
type UpgradeEvent struct {
	Name string
	// From and To are the versions replaced and tried; From is "" for a version
	// refused at a handle's first open (nothing was replaced).
	From, To string
	// Path is the new version's file.
	Path string
	// Err is nil when the new version took over, else an *UpgradeError.
	Err error
}

// UpgradeError says why a new version was refused. Err is the cause: a
// *lifecycle.OpenError (it did not start or failed the handshake), a *BindError (its
// catalog lacks a contract, service or method in use; errors.Is ErrServiceMissing,
// ErrVersionMismatch or ErrMethodMissing), an error matching discovery.ErrDigestMismatch
// (a pin), or ErrNoAdapter (it ended right after its handshake).
type UpgradeError struct {
	Name, Version, Path string
	Err                 error
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("registry: upgrade of %s to %s (%s) refused: %v", e.Name, e.Version, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *UpgradeError) Unwrap() error { return e.Err }

// UpgradeStatus is where a handle's upgrades stand.
type UpgradeStatus struct {
	// Version is the version serving new calls ("" when its file name has none).
	Version string
	// Upgrades counts the new versions that took over.
	Upgrades int
	// Err is the last refusal (an *UpgradeError), nil when none came since the last
	// upgrade that took over.
	Err error
	// Draining lists the replaced versions still finishing their calls, oldest first.
	Draining []Draining
}

// Draining is a replaced version still finishing its calls.
type Draining struct {
	Version string
	Path    string
	// Pid is its process's id, 0 when none runs.
	Pid int
	// InFlight is the number of its calls under way.
	InFlight int
}

// Upgrades returns where the handle's upgrades stand.
func (h *Handle) Upgrades() UpgradeStatus {
	cur := h.cur.Load()
	h.mu.Lock()
	st := UpgradeStatus{Version: cur.versionString(), Upgrades: h.upgrades, Err: h.upErr}
	gs := make([]*gen, 0, len(h.draining))
	for g := range h.draining {
		gs = append(gs, g)
	}
	h.mu.Unlock()
	sort.Slice(gs, func(i, j int) bool { return gs[i].version.LessThan(gs[j].version) })
	for _, g := range gs {
		d := Draining{Version: g.versionString(), Path: g.path, InFlight: int(g.active.Load())}
		if a := g.sup.Current(); a != nil {
			d.Pid = a.Pid()
		}
		st.Draining = append(st.Draining, d)
	}
	return st
}

// followRef is the reference a handle opened by ref (and found at v) follows: ref's
// constraint, or for a NAME without one, v's major version.
func followRef(ref string, v *version.Version) (*discovery.Ref, error) {
	parsed, err := discovery.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if parsed.Constraints == nil && v != nil {
		major := v.Segments()[0]
		cs, err := version.NewConstraint(fmt.Sprintf(">= %d.0.0, < %d.0.0", major, major+1))
		if err != nil {
			return nil, err
		}
		parsed.Constraints = cs
	}
	return &parsed, nil
}

// fileID is what identifies a file tried as a new version: a file refused is tried
// again only when one of these changed.
type fileID struct {
	size   int64
	mtime  int64 // UnixNano
	digest string
}

// statID returns the size and time part of path's identity (following links), and
// whether the file may be executed.
func statID(path string) (fileID, bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false, err
	}
	exec := fi.Mode().IsRegular() && (goruntime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0)
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, exec, nil
}

// Rescan scans the configured directories again and, with Config.Upgrade set, lets
// every handle that follows upgrades (only those of the given adapter names, when
// any are given) take over the newest eligible version found (see [Upgrade]). It
// returns when each has taken over or refused its new version, or found none; the
// old versions drain in the background. It waits the settle interval when a new
// version was found. Errors are the scan's and ctx's: refusals are reported per
// handle ([Handle.Upgrades], Upgrade.OnUpgrade).
func (r *Registry) Rescan(ctx context.Context, names ...string) error {
	if ctx == nil {
		return runtime.ErrNilContext
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errRegistryClosed
	}
	r.opening.Add(1) // Close waits for it as for an open
	r.mu.Unlock()
	defer r.opening.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(r.closing, func() { cancel(errRegistryClosed) })()

	r.rescanning.Lock()
	defer r.rescanning.Unlock()
	res, err := r.Discover(ctx)
	if err != nil || r.cfg.Upgrade == nil {
		return err
	}
	want := make(map[*Handle][]discovery.Adapter)
	paths := make(map[string]bool)
	for _, h := range r.Opened() {
		if h.ref == nil || (len(names) > 0 && !slices.Contains(names, h.name)) {
			continue
		}
		if cands := h.candidates(res, r.cfg.Prerelease); len(cands) > 0 {
			want[h] = cands
			for _, a := range cands {
				paths[a.Path] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	stable, err := r.settled(ctx, paths)
	if err != nil {
		return err
	}
	for _, h := range r.Opened() {
		if cands := want[h]; len(cands) > 0 {
			h.upgrade(ctx, cands, stable)
		}
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// candidates returns the adapters of res h could upgrade to, newest first: eligible
// for its reference, newer than the version serving, and not refused as they are.
func (h *Handle) candidates(res *discovery.Result, pre bool) []discovery.Adapter {
	cur := h.cur.Load()
	opts := &discovery.SelectOptions{Prerelease: pre}
	var out []discovery.Adapter
	for _, a := range res.Lookup(h.name) {
		if cur.version == nil || !a.Version.GreaterThan(cur.version) {
			continue
		}
		if _, err := (&discovery.Result{Adapters: []discovery.Adapter{a}}).Select(*h.ref, opts); err != nil {
			continue
		}
		if _, refused := h.reg.refusedFile(a.Path); refused {
			continue
		}
		out = append(out, a)
	}
	return out
}

// settled returns the identity of each of paths that is stable: an executable
// regular file whose size and modification time did not change over the settle
// interval (nor while it was hashed).
func (r *Registry) settled(ctx context.Context, paths map[string]bool) (map[string]fileID, error) {
	before := make(map[string]fileID, len(paths))
	for p := range paths {
		if id, exec, err := statID(p); err == nil && exec {
			before[p] = id
		}
	}
	t := time.NewTimer(r.cfg.Upgrade.settle())
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return nil, context.Cause(ctx)
	}
	stable := make(map[string]fileID, len(before))
	for p, id := range before {
		if now, exec, err := statID(p); err != nil || !exec || now != id {
			r.log.Debug("new adapter file is still changing; left for a later rescan", "path", p)
			continue
		}
		sum, err := digest.FileAt(p)
		if err != nil {
			continue
		}
		if now, _, err := statID(p); err != nil || now != id {
			continue
		}
		id.digest = sum
		stable[p] = id
	}
	return stable, nil
}

// upgrade lets the newest stable candidate that h accepts take over; each one refused
// is remembered and reported, and the next older one is tried.
func (h *Handle) upgrade(ctx context.Context, cands []discovery.Adapter, stable map[string]fileID) {
	h.upgrading.Lock()
	defer h.upgrading.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.stopCtx, cancel)()
	for _, a := range cands {
		if ctx.Err() != nil {
			return
		}
		id, ok := stable[a.Path]
		cur := h.cur.Load()
		if !ok || !a.Version.GreaterThan(cur.version) {
			continue
		}
		err := h.takeOver(ctx, cur, a, id)
		if err != nil && (ctx.Err() != nil || errors.Is(err, runtime.ErrClosed)) {
			return // closed meanwhile: not the new version's fault, nothing to record
		}
		h.report(cur, a, id, err)
		if err == nil {
			return
		}
	}
}

// takeOver starts a as h's new version, checks it, and switches new calls to it; the
// old version cur then drains in the background.
func (h *Handle) takeOver(ctx context.Context, cur *gen, a discovery.Adapter, id fileID) error {
	r := h.reg
	pin, err := r.allowedDigest(h.name, a.Path, id.digest)
	if err == nil && pin == "" && cur.digest != "" {
		// The version serving was pinned by its path: it is left for pinned files only.
		err = &digest.MismatchError{Path: a.Path, Want: "a digest pinned for " + h.name, Got: id.digest}
	}
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, bound.Call(r.cfg.Limits))
	defer cancel()
	sup, err := r.supervise(sctx, a.Path, h.name, pin, h.cfgJSON)
	if err != nil {
		return err
	}
	g := newGen(sup, a.Path, a.Version, pin)
	err = ErrNoAdapter
	if ad := sup.Current(); ad != nil {
		err = h.compatible(cur.catalog(), ad.Catalog())
	}
	if err == nil {
		h.mu.Lock()
		if h.closed {
			err = errRegistryClosed
		} else {
			h.cur.Store(g)
			h.upgrades++
			h.upErr = nil
			if h.draining == nil {
				h.draining = make(map[*gen]struct{})
			}
			h.draining[cur] = struct{}{}
			h.retiring.Add(1)
		}
		h.mu.Unlock()
	}
	if err != nil {
		if cerr := sup.Close(); cerr != nil {
			r.log.Warn("refused adapter version not verified gone", "adapter", h.name, "path", a.Path, "error", cerr)
			err = errors.Join(err, cerr)
		}
		return err
	}
	go h.drain(cur)
	return nil
}

// catalog is the catalog of g's running adapter, or nil.
func (g *gen) catalog() *wire.Catalog {
	if a := g.sup.Current(); a != nil {
		return a.Catalog()
	}
	return g.firstCatalog
}

// compatible checks a new version's catalog: every contract bound to h, or with none
// bound, every service and method of old at the same service version. The error is a
// *BindError.
func (h *Handle) compatible(old, next *wire.Catalog) error {
	h.mu.Lock()
	bound := slices.Clone(h.bound)
	h.mu.Unlock()
	if len(bound) > 0 {
		for _, svc := range bound {
			if err := CheckCatalog(next, svc); err != nil {
				return err
			}
		}
		return nil
	}
	if old == nil {
		return nil
	}
	for _, s := range old.Services {
		ns, ok := next.Service(s.ID)
		switch {
		case !ok:
			return &BindError{Service: s.ID, Err: ErrServiceMissing}
		case ns.Version != s.Version:
			return &BindError{Service: s.ID, Err: ErrVersionMismatch, Detail: fmt.Sprintf("new version has %d, the serving one %d", ns.Version, s.Version)}
		}
		for _, m := range s.Methods {
			if !contains(ns.Methods, m) {
				return &BindError{Service: s.ID, Err: ErrMethodMissing, Detail: m}
			}
		}
	}
	return nil
}

// report records and tells the outcome of an upgrade tried.
func (h *Handle) report(cur *gen, a discovery.Adapter, id fileID, err error) {
	r := h.reg
	ev := UpgradeEvent{Name: h.name, From: cur.versionString(), To: a.Version.String(), Path: a.Path}
	if err == nil {
		r.log.Info("adapter upgraded: new calls go to the new version", "adapter", h.name, "from", ev.From, "to", ev.To, "path", a.Path)
	} else {
		ev.Err = &UpgradeError{Name: h.name, Version: ev.To, Path: a.Path, Err: err}
		r.refuse(h.name, ev.To, a.Path, id, err)
		h.mu.Lock()
		h.upErr = ev.Err
		h.mu.Unlock()
		r.log.Warn("adapter upgrade refused; the serving version stays", "adapter", h.name, "serving", ev.From, "refused", ev.To, "path", a.Path, "error", err)
	}
	if f := r.cfg.Upgrade.OnUpgrade; f != nil {
		f(ev)
	}
}

// drainPoll is how often a draining version is checked for having no process left
// (it crashed or is being restarted: nothing in flight on it can still finish).
const drainPoll = 100 * time.Millisecond

// drain waits for the calls in flight on a replaced version to finish — each within
// its deadline, so at most the call deadline — then closes it verified.
func (h *Handle) drain(old *gen) {
	defer h.retiring.Done()
	r := h.reg
	old.retire()
	bound := time.NewTimer(bound.Call(r.cfg.Limits) + time.Second)
	defer bound.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
wait:
	for {
		select {
		case <-old.drained:
			break wait
		case <-h.stopCtx.Done():
			break wait
		case <-bound.C:
			r.log.Warn("replaced adapter version still has calls after the call deadline; closing it", "adapter", h.name, "version", old.versionString(), "in_flight", old.active.Load())
			break wait
		case <-tick.C:
			if a := old.sup.Current(); a == nil || a.Err() != nil {
				break wait // no process: calls waiting for its restart go to the new version
			}
		}
	}
	err := old.sup.Close()
	if err != nil {
		r.log.Warn("replaced adapter version not verified gone; its package directory stays reserved", "adapter", h.name, "version", old.versionString(), "error", err)
	} else {
		r.log.Debug("replaced adapter version closed, verified gone", "adapter", h.name, "version", old.versionString())
	}
	h.mu.Lock()
	delete(h.draining, old)
	h.retired += old.sup.Stats().Restarts
	if err != nil {
		h.retErr = errors.Join(h.retErr, err)
	}
	h.mu.Unlock()
}
