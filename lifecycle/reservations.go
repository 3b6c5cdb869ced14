package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
)

// ErrReserved is the cause of a *ReservedError: a package directory may still be in
// use by a process tree that is not proven gone.
var ErrReserved = errors.New("package directory is reserved")

// ReservedError says why a package directory may not be released.
type ReservedError struct {
	Dir        string
	Running    int     // adapters of this directory that are open or closing
	Unverified []error // cleanups that could not be verified (each a *platform.UnverifiedError)
}

func (e *ReservedError) Error() string {
	msg := fmt.Sprintf("lifecycle: %s: %v: %d running", e.Dir, ErrReserved, e.Running)
	if len(e.Unverified) > 0 {
		msg += fmt.Sprintf(", %d unverified cleanup(s): %v", len(e.Unverified), e.Unverified[0])
	}
	return msg
}

// Unwrap returns ErrReserved and the unverified cleanups.
func (e *ReservedError) Unwrap() []error { return append([]error{ErrReserved}, e.Unverified...) }

// Reservations tracks which package directories may still be used by an adapter's
// process tree. A directory is reserved from the moment an adapter of it is spawned
// until its tree is proven gone; when cleanup cannot be verified, the directory stays
// reserved, and [Reservations.Reverify] may try again later. An installer or updater asks
// [Reservations.CanRelease] before it removes or replaces a package's files.
//
// The zero value is ready to use; a Reservations must not be copied after first use.
type Reservations struct {
	mu   sync.Mutex
	dirs map[string]*reservation
}

type reservation struct {
	running    int
	unverified map[*platform.Tree]error
}

func cleanDir(dir string) string { return filepath.Clean(dir) }

func (r *Reservations) get(dir string) *reservation {
	if r.dirs == nil {
		r.dirs = make(map[string]*reservation)
	}
	res := r.dirs[dir]
	if res == nil {
		res = &reservation{}
		r.dirs[dir] = res
	}
	return res
}

func (r *Reservations) gc(dir string, res *reservation) {
	if res.running == 0 && len(res.unverified) == 0 {
		delete(r.dirs, dir)
	}
}

// acquire reserves dir for one more running tree.
func (r *Reservations) acquire(dir string) {
	if r == nil {
		return
	}
	dir = cleanDir(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get(dir).running++
}

// finish ends one running tree's hold on dir: released when verified (cause nil),
// otherwise kept with the tree so that Reverify can try again.
func (r *Reservations) finish(dir string, tree *platform.Tree, cause error) {
	if r == nil {
		return
	}
	dir = cleanDir(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.get(dir)
	if res.running > 0 {
		res.running--
	}
	if cause != nil && tree != nil {
		if res.unverified == nil {
			res.unverified = make(map[*platform.Tree]error)
		}
		res.unverified[tree] = cause
	}
	r.gc(dir, res)
}

// CanRelease returns nil when no process tree that may use dir remains: no adapter of
// it is open or closing and every cleanup was verified. Otherwise it returns a
// *ReservedError (errors.Is(err, ErrReserved)).
func (r *Reservations) CanRelease(dir string) error {
	if r == nil {
		return nil
	}
	dir = cleanDir(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.dirs[dir]
	if res == nil {
		return nil
	}
	e := &ReservedError{Dir: dir, Running: res.running}
	for _, err := range res.unverified {
		e.Unverified = append(e.Unverified, err)
	}
	return e
}

// Reserved lists the directories currently reserved, sorted.
func (r *Reservations) Reserved() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.dirs))
	for d := range r.dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Reverify tries again to end and verify every unverified tree of dir, within ctx.
// Trees proven gone are released; it returns CanRelease(dir) afterwards.
func (r *Reservations) Reverify(ctx context.Context, dir string) error {
	if ctx == nil {
		return runtime.ErrNilContext
	}
	if r == nil {
		return nil
	}
	dir = cleanDir(dir)
	r.mu.Lock()
	var trees []*platform.Tree
	if res := r.dirs[dir]; res != nil {
		for t := range res.unverified {
			trees = append(trees, t)
		}
	}
	r.mu.Unlock()
	for _, t := range trees {
		err := t.Kill(ctx)
		if err == nil {
			err = t.Verify(ctx)
		}
		released := false
		r.mu.Lock()
		// Another Reverify may have proven this tree gone (and closed it) meanwhile:
		// only a tree still recorded as unverified is updated.
		if res := r.dirs[dir]; res != nil {
			if _, still := res.unverified[t]; still {
				if err == nil {
					delete(res.unverified, t)
					r.gc(dir, res)
					released = true
				} else {
					res.unverified[t] = err
				}
			}
		}
		r.mu.Unlock()
		if released {
			_ = t.Close()
		}
	}
	return r.CanRelease(dir)
}
