package registry

import (
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// startRecord is the start backoff of one executable path, and the file it was kept
// for.
type startRecord struct {
	starts *lifecycle.Starts
	file   os.FileInfo // nil when the file could not be read
}

// startsOf returns the record of starts of the executable at path, shared by every
// supervisor of it: an adapter that failed to start is not started again by each
// Open, but after its backoff (see lifecycle.RestartPolicy). A different file at path
// (another file, size or modification time: an operator replaced a broken one) is a new
// adapter, and starts with a new record, as a refusal is forgotten for it.
func (r *Registry) startsOf(path string) *lifecycle.Starts {
	fi, err := os.Stat(path)
	if err != nil {
		fi = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.starts == nil {
		r.starts = make(map[string]*startRecord)
	}
	rec := r.starts[path]
	if rec == nil || (fi != nil && rec.file != nil && !sameFile(rec.file, fi)) {
		rec = &startRecord{starts: new(lifecycle.Starts)}
		r.starts[path] = rec
	}
	if fi != nil {
		rec.file = fi
	}
	return rec.starts
}

// sameFile reports whether a and b are the same file, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Starts returns the state of the start backoff of the executable at path (see
// lifecycle.RestartPolicy): its starts, their failures and when the next may be tried,
// across every Open of the file there. It is zero for a path never started.
func (r *Registry) Starts(path string) lifecycle.BackoffStats {
	r.mu.Lock()
	var st *lifecycle.Starts
	if rec := r.starts[filepath.Clean(path)]; rec != nil {
		st = rec.starts
	}
	r.mu.Unlock()
	return st.Stats()
}
