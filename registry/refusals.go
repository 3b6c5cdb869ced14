package registry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
)

// Refusal records one adapter file the registry refused: an upgrade to it failed to
// start, failed the handshake or the catalog check; it failed to start at the first
// open of its name while an older version started (which then serves); or a pin did not
// allow it.
// A refused file is not started by any path — open by name, constraint or path,
// restart, upgrade — while it stays the same file: same path, size, modification
// time and SHA-256. A new file at the path is a new decision; [Registry.Retry]
// forgets a refusal; a refusal by a pin is forgotten once the pins in force no longer
// refuse the file.
type Refusal struct {
	Name    string    `json:"name"`
	Version string    `json:"version"`
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// SHA256 is the lower-case hex SHA-256 of the file refused.
	SHA256 string `json:"sha256"`
	// At is when it was refused.
	At time.Time `json:"at"`
	// Reason is why.
	Reason string `json:"reason"`
	// Pin is set when a pin refused it (its digest was not allowed).
	Pin bool `json:"pin,omitempty"`
}

// RefusedError is the error of an open or start of a refused file. Unwrap returns
// the cause when the refusal was made by this open (a pin: errors.Is
// discovery.ErrDigestMismatch), else nil.
type RefusedError struct {
	Refusal Refusal
	cause   error
}

// Unwrap returns the cause of a refusal made by the open that returned it, else nil.
func (e *RefusedError) Unwrap() error { return e.cause }

func (e *RefusedError) Error() string {
	r := e.Refusal
	return "registry: adapter " + r.Path + " (" + r.Name + " " + r.Version + ") was refused at " +
		r.At.UTC().Format(time.RFC3339) + ": " + r.Reason + "; it is not started again until a new file replaces it or the refusal is retried"
}

// Bounds of the record of refusals.
const (
	// maxRefusals bounds the record: the oldest refusal is forgotten beyond it.
	maxRefusals = 1024
	// maxReason bounds a refusal's reason, in bytes.
	maxReason = 1024
)

// refusal is one entry of the record.
type refusal struct {
	Refusal
	// seen is the file last found to be the refused one: the same file (device and
	// inode), size and modification time again is not hashed again.
	seen os.FileInfo
}

// initRefusals takes the refusals the host kept (Config.Refused), leaving out those
// whose file is gone and those a pin made that the pins in force no longer make.
// It reports whether any was left out.
func (r *Registry) initRefusals(in []Refusal) bool {
	r.refusals = make(map[string]*refusal, len(in))
	dropped := false
	for _, rf := range in {
		if _, err := os.Stat(rf.Path); errors.Is(err, os.ErrNotExist) || (rf.Pin && !r.pinRefuses(rf.Name, rf.Path, rf.SHA256)) {
			dropped = true
			continue
		}
		if old := r.refusals[rf.Path]; old == nil || old.At.Before(rf.At) {
			r.refusals[rf.Path] = &refusal{Refusal: rf}
		}
	}
	return dropped
}

// pinRefuses reports whether the pins in force refuse a file of adapter name at path
// with digest sum: allowedDigest does, or a file of the adapter is pinned by path and
// sum is not allowed for its name (an upgrade from that file would refuse it).
func (r *Registry) pinRefuses(name, path, sum string) bool {
	pin, err := r.allowedDigest(name, path, sum)
	if err != nil || pin != "" {
		return err != nil
	}
	for p := range r.cfg.Pins {
		if n, _, err := discovery.ParseFileName(filepath.Base(p), ""); err == nil && n == name {
			return true
		}
	}
	return false
}

// refuse records that the file at path (identified by id) was refused, and returns
// the record.
func (r *Registry) refuse(name, ver, path string, id fileID, cause error) Refusal {
	reason := cause.Error()
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "..."
	}
	rf := Refusal{Name: name, Version: ver, Path: path, Size: id.size, ModTime: time.Unix(0, id.mtime).UTC(),
		SHA256: id.digest, At: time.Now().UTC(), Reason: reason, Pin: errors.Is(cause, digest.ErrMismatch)}
	r.refMu.Lock()
	r.refusals[path] = &refusal{Refusal: rf}
	for len(r.refusals) > maxRefusals {
		var oldest *refusal
		for _, o := range r.refusals {
			if oldest == nil || o.At.Before(oldest.At) {
				oldest = o
			}
		}
		delete(r.refusals, oldest.Path)
	}
	r.refMu.Unlock()
	r.saveRefusals()
	return rf
}

// refusedFile returns the refusal of the file now at path, if that file is the one
// refused. A different file there (another size, time or digest) is a new decision:
// the refusal is forgotten. A file that cannot be read to tell counts as refused.
func (r *Registry) refusedFile(path string) (Refusal, bool) {
	r.refMu.Lock()
	rec := r.refusals[path]
	var rf Refusal
	var seen os.FileInfo
	if rec != nil {
		rf, seen = rec.Refusal, rec.seen
	}
	r.refMu.Unlock()
	if rec == nil {
		return Refusal{}, false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return rf, !errors.Is(err, os.ErrNotExist)
	}
	if fi.Size() != rf.Size || !fi.ModTime().Equal(rf.ModTime) {
		r.forget(rec)
		return Refusal{}, false
	}
	if seen != nil && os.SameFile(seen, fi) {
		return rf, true
	}
	sum, err := digest.FileAt(path)
	if err != nil {
		return rf, true
	}
	if sum != rf.SHA256 {
		r.forget(rec)
		return Refusal{}, false
	}
	r.refMu.Lock()
	rec.seen = fi
	r.refMu.Unlock()
	return rf, true
}

// forget drops rec from the record, if it is still there.
func (r *Registry) forget(rec *refusal) {
	r.refMu.Lock()
	mine := r.refusals[rec.Path] == rec
	if mine {
		delete(r.refusals, rec.Path)
	}
	r.refMu.Unlock()
	if mine {
		r.log.Info("refused adapter file replaced: it is a new file, no longer refused", "path", rec.Path)
		r.saveRefusals()
	}
}

// admit is the check before every start of the file at path, of adapter name
// (lifecycle.Config.Admit): not refused, and no grant overlapping another adapter's
// write grant (grants.go).
func (r *Registry) admit(path, name string) error {
	if rf, ok := r.refusedFile(path); ok {
		return &RefusedError{Refusal: rf}
	}
	return r.checkGrants(path, name)
}

// Refused returns the record of refused files, oldest first.
func (r *Registry) Refused() []Refusal {
	r.refMu.Lock()
	defer r.refMu.Unlock()
	return r.refusedLocked()
}

func (r *Registry) refusedLocked() []Refusal {
	out := make([]Refusal, 0, len(r.refusals))
	for _, rec := range r.refusals {
		out = append(out, rec.Refusal)
	}
	slices.SortFunc(out, func(a, b Refusal) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out
}

// Retry forgets the refusals of the files of adapter name, so that they may be
// started and tried as upgrades again, and returns them.
func (r *Registry) Retry(name string) []Refusal {
	var out []Refusal
	r.refMu.Lock()
	for p, rec := range r.refusals {
		if rec.Name == name {
			out = append(out, rec.Refusal)
			delete(r.refusals, p)
		}
	}
	r.refMu.Unlock()
	if len(out) > 0 {
		r.log.Info("refusals forgotten: the files may be tried again", "adapter", name, "files", len(out))
		r.saveRefusals()
	}
	return out
}

// saveRefusals hands the record to the host (Config.OnRefused), in the order of
// the changes.
func (r *Registry) saveRefusals() {
	if r.cfg.OnRefused == nil {
		return
	}
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	r.refMu.Lock()
	list := r.refusedLocked()
	r.refMu.Unlock()
	r.cfg.OnRefused(list)
}

// selectAdmitted selects what ref names among the adapters of res that are not
// refused files (see [Refusal]): the newest eligible version that is not refused. When
// only refused files are eligible, the error is the newest one's *RefusedError.
func (r *Registry) selectAdmitted(res *discovery.Result, ref discovery.Ref, opts *discovery.SelectOptions) (discovery.Adapter, error) {
	if !r.anyRecorded(res, ref.Name) {
		return res.Select(ref, opts) // the common case: nothing of the name was refused
	}
	var firstRefused *RefusedError
	admitted := &discovery.Result{Rejected: res.Rejected, Adapters: make([]discovery.Adapter, 0, len(res.Adapters))}
	for _, a := range res.Adapters {
		if a.Name != ref.Name {
			admitted.Adapters = append(admitted.Adapters, a) // for the names an error lists
			continue
		}
		if rf, refused := r.refusedFile(a.Path); refused {
			if _, err := (&discovery.Result{Adapters: []discovery.Adapter{a}}).Select(ref, opts); err == nil &&
				(firstRefused == nil || refusalNewer(a, firstRefused.Refusal)) {
				firstRefused = &RefusedError{Refusal: rf}
			}
			continue
		}
		admitted.Adapters = append(admitted.Adapters, a)
	}
	a, err := admitted.Select(ref, opts)
	if err != nil && firstRefused != nil {
		return discovery.Adapter{}, firstRefused
	}
	return a, err
}

// anyRecorded reports whether a file of adapter name in res has a refusal recorded.
func (r *Registry) anyRecorded(res *discovery.Result, name string) bool {
	r.refMu.Lock()
	defer r.refMu.Unlock()
	if len(r.refusals) == 0 {
		return false
	}
	for _, a := range res.Adapters {
		if a.Name == name && r.refusals[a.Path] != nil {
			return true
		}
	}
	return false
}

// refusalNewer reports whether a is a newer version than the refused file rf.
func refusalNewer(a discovery.Adapter, rf Refusal) bool {
	v, err := version.NewVersion(rf.Version)
	return err != nil || a.Version.GreaterThan(v)
}
