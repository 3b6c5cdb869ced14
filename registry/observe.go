package registry

import (
	"slices"
	"strings"

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
		cfg.Env = WithLogLevel(cfg.Env, lvl)
	}
}

// WithLogLevel returns env with $ADAPTERKIT_LOG_LEVEL  set to
// level, replacing an earlier value; env itself is not modified.
func WithLogLevel(env []string, level hclog.Level) []string {
	prefix := proto.LogLevelEnv + "="
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, prefix) })
	return append(out, prefix+level.String())
}

// Stats returns a snapshot of the adapter's figures: calls by method, restarts, exits,
// resource use (see lifecycle.Stats).
func (h *Handle) Stats() lifecycle.Stats { return h.sup.Stats() }

// AdapterStats is the snapshot of one open adapter of a Registry.
type AdapterStats struct {
	Path string
	lifecycle.Stats
}

// Stats returns a snapshot of every open adapter's figures, sorted by path.
func (r *Registry) Stats() []AdapterStats {
	hs := r.Opened()
	out := make([]AdapterStats, len(hs))
	for i, h := range hs {
		out[i] = AdapterStats{Path: h.path, Stats: h.Stats()}
	}
	return out
}
