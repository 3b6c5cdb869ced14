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
