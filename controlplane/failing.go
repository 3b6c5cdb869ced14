package controlplane

import (
	"path/filepath"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
)

// backoffStatus sets the start figures of as, and its state "backoff" while the next
// start waits.
func backoffStatus(as *AdapterStatus, b lifecycle.BackoffStats) {
	as.Starts, as.FailedStarts = b.Starts, b.Failed
	if b.Failures == 0 {
		return
	}
	as.Backoff = &BackoffStatus{Failures: b.Failures}
	if b.LastError != nil {
		as.Backoff.LastError = b.LastError.Error()
	}
	if !b.RetryAt.IsZero() {
		t := b.RetryAt.UTC()
		as.Backoff.NextTry = &t
		as.State = "backoff"
	}
}

// failingStatus is the status of the adapters whose last open failed and that are
// not open now (hs are the handles open).
func (s *adapterSet) failingStatus(hs []*registry.Handle) []AdapterStatus {
	out := []AdapterStatus{}
	for _, f := range s.failingAdapters(hs) {
		as := AdapterStatus{AdapterInfo: f.info, State: "failed", Draining: []DrainingStatus{},
			AdapterFigures: AdapterFigures{Methods: []MethodFigures{}, LogTail: []string{}}}
		backoffStatus(&as, f.starts)
		out = append(out, as)
	}
	return out
}

// failingAdapter is an adapter whose last open failed, and the state of its start
// backoff.
type failingAdapter struct {
	info   AdapterInfo
	starts lifecycle.BackoffStats
}

// failingAdapters returns the adapters whose last open failed and that are not open
// now (hs are the handles open), one per executable.
func (s *adapterSet) failingAdapters(hs []*registry.Handle) []failingAdapter {
	s.mu.Lock()
	var paths []string
	for k, p := range s.failing {
		if s.open[k] == nil {
			paths = append(paths, p)
		}
	}
	s.mu.Unlock()
	seen := make(map[string]bool, len(hs))
	for _, h := range hs {
		seen[h.Path()] = true
	}
	var out []failingAdapter
	for _, path := range paths {
		if seen[path] {
			continue
		}
		seen[path] = true
		info := AdapterInfo{Path: path, Dir: filepath.Dir(path), Name: filepath.Base(path)}
		if n, v, err := discovery.ParseFileName(filepath.Base(path), ""); err == nil {
			info.Name = n
			if v != nil {
				info.Version = v.String()
			}
		}
		out = append(out, failingAdapter{info: info, starts: s.reg.Starts(path)})
	}
	return out
}
