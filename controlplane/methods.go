package controlplane

import (
	"context"
	"os"
	goruntime "runtime"
	"sort"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/cpconst"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/runtime"
)

// dispatch answers one request. Every path ends with exactly one response.
func (c *serverConn) dispatch(env envelope) {
	var (
		result any
		err    *Error
	)
	if !c.perm.allows(env.Method) {
		c.end(env.ID)
		c.respond(env.ID, nil, c.perm.deny(env.Method))
		return
	}
	switch env.Method {
	case methodPing:
		if err = decodeParams(env.Params, &struct{}{}); err == nil {
			result = PingResult{ServerTime: time.Now().UTC()}
		}
	case methodVersion:
		if err = decodeParams(env.Params, &struct{}{}); err == nil {
			result = VersionResult{Daemon: c.srv.cfg.Version, Protocol: cpconst.ProtocolVersion,
				AdapterProtocol: limits.ProtocolVersion, Go: goruntime.Version()}
		}
	case methodCapabilities:
		var p capabilitiesParams
		if err = decodeParams(env.Params, &p); err == nil {
			if p.Adapter != "" {
				result, err = c.srv.set.capabilitiesOf(c.ctx, p.Adapter)
			} else {
				result, err = c.srv.set.capabilities(c.ctx)
			}
		}
	case methodStatus:
		if err = decodeParams(env.Params, &struct{}{}); err == nil {
			st := c.srv.status()
			if !c.perm.seesLogs() {
				for i := range st.Adapters {
					st.Adapters[i].LogTail = nil // omitted from the answer
				}
			}
			result = st
		}
	case methodSend:
		result, err = c.handleSend(env)
	case methodUpgrade:
		var p upgradeParams
		if err = decodeParams(env.Params, &p); err == nil {
			var up *UpgradeResult
			if up, err = c.srv.set.upgrade(c.ctx, p.Adapter, p.Retry); err == nil && p.Adapter != "" && len(up.Adapters) == 0 {
				// Not open: an adapter the directories hold is answered with an empty
				// list (nothing runs to upgrade), any other name with not_found.
				_, err = c.srv.set.resolve(c.ctx, p.Adapter)
			}
			result = up
		}
	case methodDiscover:
		result, err = c.handleDiscover(env)
	default:
		err = newError(CodeUnknownMethod, nil, "method %q is not in the control-plane schema", env.Method)
	}
	if err != nil {
		result = nil
	}
	// The id is free again before its final response can reach the client, so a client
	// may reuse an id as soon as it has its answer.
	c.end(env.ID)
	c.respond(env.ID, result, err)
}

// sendWire is SendParams as decoded (decodeSend), to tell absent fields from empty
// ones: Params is nil when absent, the text "null" when null.
type sendWire struct {
	Adapter   *string
	Method    *string
	Params    []byte
	TimeoutMS *int64
}

func (c *serverConn) handleSend(env envelope) (any, *Error) {
	w, err := decodeSend(env.Params)
	if err != nil {
		return nil, err
	}
	lim := c.srv.cfg.Limits
	switch {
	case w.Adapter == nil || *w.Adapter == "":
		return nil, newError(CodeInvalidParams, nil, "params: adapter is required")
	case w.Method == nil || *w.Method == "":
		return nil, newError(CodeInvalidParams, nil, "params: method is required")
	case string(w.Params) != "null" && !rawObject(w.Params):
		return nil, newError(CodeInvalidParams, nil, "params: params must be a JSON object")
	// Bounds are compared in milliseconds: converted first, a huge value would wrap.
	case w.TimeoutMS != nil && (*w.TimeoutMS < 0 || *w.TimeoutMS > bound.Call(lim).Milliseconds()):
		return nil, newError(CodeInvalidParams, nil, "params: timeout_ms must be from 0 to %d", bound.Call(lim).Milliseconds())
	}
	if string(w.Params) == "null" {
		w.Params = nil // null params stand for {}, as absent ones do
	}
	timeout := bound.Call(lim)
	if w.TimeoutMS != nil && *w.TimeoutMS > 0 {
		timeout = time.Duration(*w.TimeoutMS) * time.Millisecond
	}
	p := SendParams{Adapter: *w.Adapter, Method: *w.Method, Params: w.Params}
	ctx := c.ctx
	if timeout >= bound.Call(lim) {
		// No shorter deadline chosen: the protocol's passing is the adapter's doing,
		// not the caller's (lifecycle.MethodStats.CallerErrors).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, runtime.ErrCallDeadline)
		defer cancel()
	}
	res, err := c.srv.set.send(ctx, p, timeout)
	if err != nil {
		return nil, err
	}
	return res, nil
}

type discoverWire struct {
	TimeoutMS *int64 `json:"timeout_ms"`
}

// discoverResult is the empty result that ends a Discover stream.
type discoverResult struct{}

// handleDiscover streams an event for every adapter found, then rescans every
// RescanInterval and streams an event for every adapter new, changed or removed,
// until the timeout; the final response has an empty result.
func (c *serverConn) handleDiscover(env envelope) (any, *Error) {
	var w discoverWire
	if err := decodeParams(env.Params, &w); err != nil {
		return nil, err
	}
	if w.TimeoutMS == nil || *w.TimeoutMS < 1 || *w.TimeoutMS > cpconst.MaxDiscoverTimeout.Milliseconds() {
		return nil, newError(CodeInvalidParams, nil, "params: timeout_ms is required, from 1 to %d", cpconst.MaxDiscoverTimeout.Milliseconds())
	}
	deadline := time.NewTimer(time.Duration(*w.TimeoutMS) * time.Millisecond)
	defer deadline.Stop()
	tick := time.NewTicker(c.srv.cfg.RescanInterval)
	defer tick.Stop()
	seen := make(map[string]AdapterInfo)
	for {
		res, err := c.srv.set.rescan(c.ctx)
		if err != nil {
			if c.ctx.Err() != nil {
				return nil, newError(CodeInternal, nil, "request cancelled: the client left or the daemon is shutting down")
			}
			return nil, newError(CodeTransportError, nil, "scanning the adapter directories: %v", err)
		}
		for _, ev := range diffScan(seen, res) {
			if err := c.event(env.ID, methodDiscover, ev); err != nil {
				return nil, newError(CodeInternal, nil, "client dropped")
			}
		}
		select {
		case <-deadline.C:
			return discoverResult{}, nil
		case <-c.ctx.Done():
			return nil, newError(CodeInternal, nil, "request cancelled: the client left or the daemon is shutting down")
		case <-tick.C:
		}
	}
}

// diffScan updates seen (by path) to res and returns the events that tell the change.
// A file the scan listed but that is gone by now (scans are shared, so res may be a
// rescan interval old) counts as gone.
func diffScan(seen map[string]AdapterInfo, res *discovery.Result) []DiscoverEvent {
	var evs []DiscoverEvent
	now := make(map[string]bool, len(res.Adapters))
	for _, a := range res.Adapters {
		info, present := presentInfo(a)
		if !present {
			continue
		}
		now[info.Path] = true
		old, ok := seen[info.Path]
		switch {
		case !ok:
			evs = append(evs, DiscoverEvent{Change: changeFound, Adapter: info})
		case old.Size != info.Size || !old.ModTime.Equal(info.ModTime) || old.Version != info.Version:
			evs = append(evs, DiscoverEvent{Change: changeChanged, Adapter: info})
		default:
			continue
		}
		seen[info.Path] = info
	}
	var gone []string
	for p := range seen {
		if !now[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		evs = append(evs, DiscoverEvent{Change: changeRemoved, Adapter: seen[p]})
		delete(seen, p)
	}
	return evs
}

// status reports the daemon's state.
func (s *server) status() *StatusResult {
	st := &StatusResult{PID: os.Getpid(), Started: s.started.UTC(), Dirs: s.cfg.Dirs,
		Clients: s.clients(), RefusedClients: s.refused.Load(), DroppedClients: s.dropped.Load(),
		Sweep: s.sweep}
	if s.remote != nil {
		st.Remote = s.remote.status()
	}
	s.set.status(st)
	st.Health = healthOK
	if st.UnverifiedCleanups > 0 || len(s.sweep.Failed) > 0 || st.RefusedNotSaved != "" {
		st.Health = healthDegraded
	}
	return st
}
