package lifecycle

import (
	"io"
	"path/filepath"

	"github.com/adapterkit/adapterkit/internal/stderrlog"
)

// nameOf is the adapter's name in logs, errors and figures.
func nameOf(cfg *Config) string {
	if cfg.Name != "" {
		return cfg.Name
	}
	return filepath.Base(cfg.Path)
}

// forwardStderr returns the writer the adapter's standard error goes to: the host's
// own (Config.Stderr) unless its lines are logged or tailed, in which case a
// stderrlog.Writer that also tees the raw bytes to Config.Stderr.
func (a *Adapter) forwardStderr() io.Writer {
	if a.cfg.StderrLogger == nil && a.obs.tail == nil {
		return a.cfg.Stderr
	}
	var sub = a.cfg.StderrLogger
	if sub != nil {
		sub = sub.Named(a.name)
	}
	sink := stderrlog.Sink{Tail: a.obs.tail, Dropped: &a.obs.droppedLines}
	a.slog = stderrlog.New(a.cfg.Stderr, sub, a.cfg.StderrLevel, a.name, sink)
	return a.slog
}

// startedStderr gives the forwarded records their pid (0: the start failed) and
// releases those that arrived meanwhile.
func (a *Adapter) startedStderr(pid int) {
	if a.slog == nil {
		return
	}
	log := a.cfg.StderrLogger
	if log != nil {
		log = log.Named(a.name)
		if pid != 0 {
			args := []any{"pid", pid}
			if a.cfg.restarts > 0 {
				args = append(args, "restart", a.cfg.restarts)
			}
			log = log.With(args...)
		}
	}
	a.slog.Start(log)
	if pid == 0 {
		a.slog.Close()
	}
}

// ended runs once the tree is ended and its cleanup decided: the last standard error
// records are logged and the exit recorded.
func (a *Adapter) ended() {
	if a.slog != nil {
		a.slog.Close()
	}
	a.obs.processExit(a, a.hostClosing.Load())
}

// Stats returns a snapshot of the adapter's figures (see [Stats]).
func (a *Adapter) Stats() Stats { return a.obs.stats(a, 0) }

// Stats returns a snapshot of the supervised adapter's figures, across its restarts.
func (s *Supervisor) Stats() Stats {
	cur := s.Current()
	st := s.cfg.obs.stats(cur, s.restartCount())
	st.Backoff = s.starts.snapshot(s.policy, cur)
	return st
}
