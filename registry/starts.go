package registry

import (
	"path/filepath"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// startsOf returns the record of starts of the executable at path, shared by every
// supervisor of it: an adapter that failed to start is not started again by each
// Open, but after its backoff (see lifecycle.RestartPolicy).
func (r *Registry) startsOf(path string) *lifecycle.Starts {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.starts == nil {
		r.starts = make(map[string]*lifecycle.Starts)
	}
	st := r.starts[path]
	if st == nil {
		st = new(lifecycle.Starts)
		r.starts[path] = st
	}
	return st
}

// Starts returns the state of the start backoff of the executable at path (see
// lifecycle.RestartPolicy): its starts, their failures and when the next may be tried,
// across every Open of it. It is zero for a path never started.
func (r *Registry) Starts(path string) lifecycle.BackoffStats {
	r.mu.Lock()
	st := r.starts[filepath.Clean(path)]
	r.mu.Unlock()
	return st.Stats()
}
