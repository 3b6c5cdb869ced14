package registry

import (
	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
)

// observe adds the registry's logging, tail and observer settings to an adapter's
// configuration.
func (r *Registry) observe(cfg *lifecycle.Config) {
	cfg.StderrLogger = r.cfg.Logger
	cfg.StderrLevel = r.cfg.StderrLevel
	cfg.LogTail = r.cfg.LogTail
	cfg.Observer = r.cfg.Observer
	if lvl := r.cfg.AdapterLogLevel; lvl != hclog.NoLevel {
		cfg.Env = proto.WithLogLevel(cfg.Env, lvl.String())
	}
}

// Stats returns a snapshot of the adapter's figures: calls by method, restarts, exits,
// resource use (see lifecycle.Stats). They are those of the version serving new calls
// (its call figures start with it), except Restarts, which counts every version's.
func (h *Handle) Stats() lifecycle.Stats {
	st := h.cur.Load().sup.Stats()
	h.mu.Lock()
	st.Restarts += h.retired
	h.mu.Unlock()
	return st
}

// AdapterStats is the snapshot of one open adapter of a Registry.
type AdapterStats struct {
	Path string
	lifecycle.Stats
	// Upgrade is where the adapter's upgrades stand (zero for a handle that does not
	// follow them).
	Upgrade UpgradeStatus
}

// Stats returns a snapshot of every open adapter's figures, sorted by path.
func (r *Registry) Stats() []AdapterStats {
	hs := r.Opened()
	out := make([]AdapterStats, len(hs))
	for i, h := range hs {
		out[i] = AdapterStats{Path: h.Path(), Stats: h.Stats(), Upgrade: h.Upgrades()}
	}
	return out
}
