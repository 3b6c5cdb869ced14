package controlplane

import (
	"sort"
	"sync/atomic"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// Monitor reads a running daemon's figures from within its process, for a host that
// exports them (e.g. as Prometheus metrics, as adapterctl serve does): what
// Status answers, and each open adapter's full snapshot. Set it in
// ServerConfig.Monitor; the zero Monitor is ready to use. Before Serve serves and once
// it is shutting down it reports nothing. It is safe for concurrent use.
type Monitor struct {
	srv atomic.Pointer[server]
}

// AdapterStats is one open adapter's snapshot as the daemon keeps it.
type AdapterStats struct {
	AdapterInfo
	// Running: an adapter process is connected (false while it restarts).
	Running bool
	// Methods are the methods of the running adapter's catalog, nil when none runs.
	Methods map[string]bool
	// Stats is the adapter's snapshot (calls, latency histogram, restarts, usage).
	Stats lifecycle.Stats
}

// Status returns what a Status request would answer, nil when the daemon is not
// serving.
func (m *Monitor) Status() *StatusResult {
	s := m.srv.Load()
	if s == nil {
		return nil
	}
	return s.status()
}

// Adapters returns the open adapters' snapshots, and those of adapters whose last
// start failed (not running, with their start figures only), sorted by path; nil when
// the daemon is not serving.
func (m *Monitor) Adapters() []AdapterStats {
	s := m.srv.Load()
	if s == nil {
		return nil
	}
	hs, _ := s.set.handles()
	out := make([]AdapterStats, 0, len(hs))
	for _, h := range hs {
		a := AdapterStats{AdapterInfo: handleInfo(h), Running: h.Status().Running, Stats: h.Stats()}
		if cat := h.Catalog(); cat != nil {
			a.Methods = make(map[string]bool)
			for _, svc := range cat.Services {
				for _, m := range svc.Methods {
					a.Methods[m] = true
				}
			}
		}
		out = append(out, a)
	}
	// Adapters whose starts fail are not open, but their start figures are reported.
	for _, f := range s.set.failingAdapters(hs) {
		out = append(out, AdapterStats{AdapterInfo: f.info, Stats: lifecycle.Stats{Name: f.info.Name, Backoff: f.starts}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
