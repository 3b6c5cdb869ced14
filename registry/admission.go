package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/runtime"
)

// The admission rule, the same for every start of a file: a first open, a restart,
// an upgrade.
//
//   - A refused file (see [Refusal]) is not started.
//   - A file of a pinned adapter name is started only when its digest is allowed
//     (pinOf); one that is not is refused by the pin without being executed.
//   - At the first open of a NAME[@CONSTRAINT], a version that fails its start is
//     tried no further: the next older eligible version is started instead, and once
//     one serves, every newer version that failed before it is refused, with the
//     record, the handle's status (Handle.Upgrades) and the OnUpgrade event of a
//     refused upgrade. When no version starts, none is refused for failing: the
//     cause may be the host's (a machine out of memory, a bad sandbox), not the
//     files', and the open fails with the newest one's error.

// startFailure is a version that failed its start at a first open.
type startFailure struct {
	a   discovery.Adapter
	id  fileID
	err error
}

// openNamed starts what a NAME[@CONSTRAINT] reference names under the admission
// rule, beginning with first (what Lookup selected). It returns the version serving
// and the refusals made on the way (newest first).
func (r *Registry) openNamed(ctx context.Context, ref string, first discovery.Adapter, cfgJSON json.RawMessage) (*gen, []*UpgradeError, error) {
	cands := r.namedCandidates(ref, first)
	var (
		failed   []startFailure
		refused  = make(map[string]*UpgradeError) // by path
		firstErr error
	)
	inOrder := func() []*UpgradeError { // newest first, as cands
		var out []*UpgradeError
		for _, a := range cands {
			if ue := refused[a.Path]; ue != nil {
				out = append(out, ue)
			}
		}
		return out
	}
	for _, a := range cands {
		if rf, refused := r.refusedFile(a.Path); refused {
			if firstErr == nil {
				firstErr = &RefusedError{Refusal: rf}
			}
			continue
		}
		pin, id, err := r.pinOf(a.Name, a.Path)
		if err != nil {
			if errors.Is(err, digest.ErrMismatch) {
				rf := r.refuse(a.Name, a.Version.String(), a.Path, id, err)
				refused[a.Path] = &UpgradeError{Name: a.Name, Version: rf.Version, Path: a.Path, Err: err}
				r.log.Warn("adapter file not started: its digest is not pinned for its name", "adapter", a.Name, "version", rf.Version, "path", a.Path)
				err = &RefusedError{Refusal: rf, cause: err}
			}
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		sup, err := r.supervise(ctx, a.Path, a.Name, pin, cfgJSON)
		if err == nil {
			g := newGen(sup, a.Path, a.Version, pin)
			for _, f := range failed {
				rf := r.refuse(f.a.Name, f.a.Version.String(), f.a.Path, f.id, f.err)
				refused[f.a.Path] = &UpgradeError{Name: f.a.Name, Version: rf.Version, Path: f.a.Path, Err: f.err}
				r.log.Warn("adapter version refused at its first open: it did not start; an older version serves",
					"adapter", a.Name, "refused", rf.Version, "serving", g.versionString(), "path", f.a.Path, "error", f.err)
			}
			return g, inOrder(), nil
		}
		var re *RefusedError
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil || errors.Is(err, runtime.ErrClosed) || errors.As(err, &re) {
			break // not the file's doing (or already refused): nothing to record
		}
		if id, ierr := identify(a.Path); ierr == nil {
			failed = append(failed, startFailure{a: a, id: id, err: err})
		}
	}
	return nil, inOrder(), firstErr
}

// namedCandidates lists the versions ref may open, newest first, from first (the
// version Lookup selected) down: those of the last scan eligible for ref.
func (r *Registry) namedCandidates(ref string, first discovery.Adapter) []discovery.Adapter {
	out := []discovery.Adapter{first}
	parsed, err := discovery.ParseRef(ref)
	if err != nil {
		return out
	}
	r.mu.Lock()
	scan := r.scan
	r.mu.Unlock()
	opts := &discovery.SelectOptions{Prerelease: r.cfg.Prerelease}
	for _, a := range scan.Lookup(parsed.Name) {
		if a.Path == first.Path || !first.Version.GreaterThan(a.Version) {
			continue
		}
		if _, err := (&discovery.Result{Adapters: []discovery.Adapter{a}}).Select(parsed, opts); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// namePinned reports whether a start of the file of adapter name at path is pinned:
// its path is pinned (Config.Pins), or its name is (Upgrade.Allowed lists it).
func (r *Registry) namePinned(name, path string) bool {
	return r.cfg.Pins[path] != "" || r.cfg.Upgrade != nil && len(r.cfg.Upgrade.Allowed[name]) > 0
}

// pinOf applies the pins to a start of the file of adapter name at path: "" for an
// unpinned file; for a pinned one its digest, when allowed (the bytes executed are
// checked against it again), else a *digest.MismatchError. id is the file's identity
// when it was read (its digest set), to record a refusal by.
func (r *Registry) pinOf(name, path string) (pin string, id fileID, err error) {
	if !r.namePinned(name, path) {
		return "", fileID{}, nil
	}
	id, err = identify(path)
	if err != nil {
		return "", id, err
	}
	pin, err = r.allowedDigest(name, path, id.digest)
	return pin, id, err
}

// allowedDigest checks a file's digest sum against the pins: a file pinned by path
// must match its pin; another of a pinned name must have one of the digests
// Upgrade.Allowed lists for it. It returns sum when allowed, "" when unpinned.
func (r *Registry) allowedDigest(name, path, sum string) (string, error) {
	if pin := r.cfg.Pins[path]; pin != "" {
		if !strings.EqualFold(pin, sum) {
			return "", &digest.MismatchError{Path: path, Want: strings.ToLower(pin), Got: sum}
		}
		return sum, nil
	}
	if !r.namePinned(name, path) {
		return "", nil
	}
	if r.cfg.Upgrade != nil {
		for _, d := range r.cfg.Upgrade.Allowed[name] {
			if strings.EqualFold(d, sum) {
				return sum, nil
			}
		}
	}
	return "", &digest.MismatchError{Path: path, Want: "one of the digests allowed for " + name, Got: sum}
}

// identify returns the identity of the file at path: size, modification time and
// digest, the size and time unchanged while it was hashed.
func identify(path string) (fileID, error) {
	id, _, err := statID(path)
	if err != nil {
		return fileID{}, err
	}
	sum, err := digest.FileAt(path)
	if err != nil {
		return fileID{}, err
	}
	if now, _, err := statID(path); err != nil || now != id {
		return fileID{}, errors.Join(errFileChanged, err)
	}
	id.digest = sum
	return id, nil
}

// errFileChanged is a file that changed while it was read to be identified.
var errFileChanged = errors.New("registry: the adapter file changed while it was read")

// addHandle makes h, serving g, one of the registry's handles; refusals are the
// versions refused at its open, newest first, the newest of which is its last
// refusal (Handle.Upgrades).
func (r *Registry) addHandle(h *Handle, g *gen, refusals []*UpgradeError) (*Handle, error) {
	h.stopCtx, h.stop = context.WithCancel(context.Background())
	h.cur.Store(g)
	if len(refusals) > 0 {
		h.upErr = refusals[0]
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		h.stop()
		return nil, errors.Join(errRegistryClosed, g.sup.Close())
	}
	r.handles[h] = struct{}{}
	r.mu.Unlock()
	return h, nil
}

// tellRefused tells Upgrade.OnUpgrade of the versions refused at a first open.
func (r *Registry) tellRefused(refusals []*UpgradeError) {
	if r.cfg.Upgrade == nil || r.cfg.Upgrade.OnUpgrade == nil {
		return
	}
	for _, ue := range refusals {
		r.cfg.Upgrade.OnUpgrade(UpgradeEvent{Name: ue.Name, To: ue.Version, Path: ue.Path, Err: ue})
	}
}

func versionString(v *version.Version) string {
	if v == nil {
		return ""
	}
	return v.String()
}
