package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
)

// probeWait bounds each check of a probe (a scan of the directories, a ping over the
// control socket); orchestrators give a probe a few seconds of their own.
const probeWait = 5 * time.Second

// healthz answers a liveness probe: 200 while the daemon's process answers and, once
// it serves, its state can be read (Monitor.Status takes the daemon's locks, so a
// daemon stuck on one leaves the probe unanswered and the orchestrator restarts it).
// It answers 200 during the sweep before serving and during the drain after SIGTERM,
// which are progress, not failure.
func (s *service) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case !s.serving.Load():
		fmt.Fprintln(w, "ok: starting (sweeping what a predecessor left)")
	case s.monitor.Status() == nil:
		fmt.Fprintln(w, "ok: stopping (closing every adapter)")
	default:
		fmt.Fprintln(w, "ok: serving")
	}
}

// readyz answers a readiness probe: 200 only while the daemon serves (after the
// sweep, before SIGTERM), at least one adapter is discoverable in its directories,
// and, when it has a control socket, the control plane answers a Ping on it; 503
// with the reason otherwise.
func (s *service) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	msg, ok := s.readiness(r.Context())
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready: "+msg)
		return
	}
	fmt.Fprintln(w, "ready: "+msg)
}

// readiness runs the readiness checks: what was found, and whether all passed.
func (s *service) readiness(ctx context.Context) (string, bool) {
	if !s.serving.Load() {
		return "the daemon does not serve yet (sweeping what a predecessor left)", false
	}
	if s.monitor.Status() == nil {
		return "the daemon is stopping", false
	}
	sctx, cancel := context.WithTimeout(ctx, probeWait)
	found, err := discovery.Scan(sctx, s.scanOpts, s.dirs...)
	cancel()
	switch {
	case err != nil:
		return "scanning " + strings.Join(s.dirs, ", ") + ": " + err.Error(), false
	case len(found.Adapters) == 0:
		return "no adapter discoverable in " + strings.Join(s.dirs, ", "), false
	}
	n := count(len(found.Adapters), "adapter", "adapters") + " discoverable"
	if s.socket == "" {
		// Serving on TCP only: the listener needs a client certificate, which the
		// probe has not; the daemon's state answering stands for the control plane.
		return n + "; control plane serving (no control socket to ping)", true
	}
	pctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	c, err := controlplane.Dial(pctx, s.socket)
	if err != nil {
		return n + "; control plane: " + err.Error(), false
	}
	defer c.Close()
	p, err := c.Ping(pctx)
	if err != nil {
		return n + "; control plane ping: " + err.Error(), false
	}
	return fmt.Sprintf("%s; control plane answered a ping on %s in %v", n, s.socket, p.RoundTrip.Round(time.Microsecond)), true
}
