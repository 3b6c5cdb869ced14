package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

// adapterSet is the daemon's set of adapters: discovered in its directories, opened
// lazily on first use through a registry (so supervised with a restart policy), and
// closed verified at shutdown.
type adapterSet struct {
	reg    *registry.Registry
	lim    *limits.Limits
	log    hclog.Logger
	base   context.Context // ends at shutdown: bounds opens, which no client owns
	exits  atomic.Uint64
	calls  atomic.Uint64
	flight atomic.Int64
	opens  sync.WaitGroup // openSlot goroutines

	mu          sync.Mutex
	open        map[string]*slot // by executable path
	droppedRest int              // restarts of handles dropped after they gave up
}

// slot is one adapter opened or being opened.
type slot struct {
	info  AdapterInfo
	ready chan struct{} // closed when h or err is set
	h     *registry.Handle
	err   error
}

func newAdapterSet(base context.Context, cfg *ServerConfig, log hclog.Logger) *adapterSet {
	s := &adapterSet{lim: cfg.Limits, log: log, base: base, open: make(map[string]*slot)}
	policy := DefaultRestart
	if cfg.Restart != nil {
		policy = *cfg.Restart
	}
	s.reg = registry.New(&registry.Config{
		Dirs: cfg.Dirs, Env: cfg.Env, Stderr: cfg.Stderr, Limits: cfg.Limits, Logger: adapterLogger(cfg, log), Restart: policy, LogTail: logTailLines,
		OnExit: func(ev lifecycle.ExitEvent) {
			s.exits.Add(1)
			log.Warn("adapter ended on its own", "adapter", ev.Adapter.Path(), "cause", ev.Cause, "cleanup", ev.Cleanup)
		},
	})
	return s
}

// rescan scans the directories again (the registry keeps the result for resolving
// references).
func (s *adapterSet) rescan(ctx context.Context) (*discovery.Result, error) {
	return s.reg.Discover(ctx)
}

// infoOf describes a discovered adapter; the file's size and time come from the
// file it resolves to.
func infoOf(a discovery.Adapter) AdapterInfo {
	info := AdapterInfo{Name: a.Name, Version: a.Version.String(), Path: a.Path, Dir: a.Dir}
	if fi, err := os.Stat(a.Resolved); err == nil {
		info.Size, info.ModTime = fi.Size(), fi.ModTime().UTC()
	}
	return info
}

// resolve finds the adapter a reference names among the discovered ones, through the
// registry (which scans again once when it is not found: a file may have been added).
func (s *adapterSet) resolve(ctx context.Context, ref string) (discovery.Adapter, *Error) {
	if ref == "" {
		return discovery.Adapter{}, newError(CodeInvalidParams, nil, "params: adapter is required")
	}
	a, err := s.reg.Lookup(ctx, ref)
	if err == nil {
		return a, nil
	}
	var re *discovery.RefError
	var nf *discovery.NotFoundError
	switch {
	case errors.Is(err, platform.ErrNotAbsolute):
		return discovery.Adapter{}, newError(CodeInvalidParams, nil, "adapter path %q is not absolute", ref)
	case errors.As(err, &re):
		return discovery.Adapter{}, newError(CodeInvalidParams, nil, "adapter reference: %v", err)
	case errors.As(err, &nf) || errors.Is(err, discovery.ErrNotFound):
		return discovery.Adapter{}, newError(CodeNotFound, nil, "adapter %q is not among the discovered adapters: %v", ref, err)
	}
	return discovery.Adapter{}, newError(CodeInternal, nil, "scanning the adapter directories: %v", err)
}

// handle returns the open adapter a, opening it when no client has yet. The open
// is bounded by the call deadline and by the daemon's life, not by the client that
// asked first; ctx bounds only this caller's wait. A failed open is not kept.
func (s *adapterSet) handle(ctx context.Context, a discovery.Adapter) (*registry.Handle, error) {
	s.mu.Lock()
	sl := s.open[a.Path]
	if sl == nil {
		sl = &slot{info: infoOf(a), ready: make(chan struct{})}
		s.open[a.Path] = sl
		s.opens.Go(func() { s.openSlot(sl) })
	}
	s.mu.Unlock()
	select {
	case <-sl.ready:
		return sl.h, sl.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *adapterSet) openSlot(sl *slot) {
	ctx, cancel := context.WithTimeout(s.base, s.lim.Call())
	defer cancel()
	h, err := s.reg.Open(ctx, sl.info.Path, nil)
	s.mu.Lock()
	sl.h, sl.err = h, err
	if err != nil && s.open[sl.info.Path] == sl {
		delete(s.open, sl.info.Path)
	}
	s.mu.Unlock()
	close(sl.ready)
	if err != nil {
		s.log.Warn("adapter did not open", "adapter", sl.info.Path, "error", err)
	}
}

// drop forgets an adapter whose supervisor gave up, closing it verified, so that the
// next use opens it afresh.
func (s *adapterSet) drop(path string, h *registry.Handle) {
	s.mu.Lock()
	if sl := s.open[path]; sl != nil && sl.h == h {
		delete(s.open, path)
		s.droppedRest += h.Stats().Restarts
	} else {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if err := h.Close(); err != nil {
		s.log.Warn("adapter cleanup not verified", "adapter", path, "error", err)
	}
}

// send makes one call. timeout is already validated.
func (s *adapterSet) send(ctx context.Context, p SendParams, timeout time.Duration) (*SendResult, *Error) {
	a, cerr := s.resolve(ctx, p.Adapter)
	if cerr != nil {
		return nil, cerr
	}
	s.flight.Add(1)
	defer s.flight.Add(-1)
	s.calls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := s.handle(ctx, a)
	if err != nil {
		return nil, mapError(err, a.Path, p.Method)
	}
	v, err := h.Call(ctx, p.Method, p.Params)
	if err != nil {
		if errors.Is(err, lifecycle.ErrGaveUp) {
			s.drop(a.Path, h)
		}
		return nil, mapError(err, a.Path, p.Method)
	}
	return &SendResult{Adapter: infoOf(a), Value: v}, nil
}

// capabilities opens every discovered adapter (concurrently) and reports its catalog.
func (s *adapterSet) capabilities(ctx context.Context) (*CapabilitiesResult, *Error) {
	res, err := s.rescan(ctx)
	if err != nil {
		return nil, newError(CodeInternal, nil, "scanning the adapter directories: %v", err)
	}
	out := &CapabilitiesResult{Adapters: make([]AdapterCapabilities, len(res.Adapters))}
	var wg sync.WaitGroup
	for i, a := range res.Adapters {
		out.Adapters[i].AdapterInfo = infoOf(a)
		wg.Go(func() {
			h, err := s.handle(ctx, a)
			if err != nil {
				out.Adapters[i].Error = mapError(err, a.Path, "")
				return
			}
			if cat := h.Catalog(); cat != nil {
				out.Adapters[i].Services = cat.Services
				return
			}
			out.Adapters[i].Error = newError(CodeTransportError, CallDetails{Adapter: a.Path}, "adapter is being restarted")
		})
	}
	wg.Wait()
	return out, nil
}

// status fills the adapter part of a StatusResult.
func (s *adapterSet) status(st *StatusResult) {
	s.mu.Lock()
	slots := make([]*slot, 0, len(s.open))
	for _, sl := range s.open {
		slots = append(slots, sl)
	}
	st.Restarts = s.droppedRest
	s.mu.Unlock()
	sort.Slice(slots, func(i, j int) bool { return slots[i].info.Path < slots[j].info.Path })
	st.Adapters = []AdapterStatus{}
	for _, sl := range slots {
		select {
		case <-sl.ready:
		default:
			continue // still opening
		}
		if sl.h == nil {
			continue
		}
		as := AdapterStatus{AdapterInfo: sl.info, State: "restarting", Restarts: sl.h.Stats().Restarts, AdapterFigures: figuresOf(sl.h.Stats())}
		st.Restarts += as.Restarts
		if hs := sl.h.Status(); hs.Running {
			as.State, as.PID, as.Mechanism, as.InFlight = "running", hs.Pid, hs.Mechanism.String(), hs.InFlight
			as.Dropped = droppedStatus(hs.Supervision)
		}
		st.Adapters = append(st.Adapters, as)
	}
	st.InFlight = s.flight.Load()
	st.Calls = s.calls.Load()
	st.Exits = s.exits.Load()
	res := s.reg.Reservations()
	st.Reserved = res.Reserved()
	for _, d := range st.Reserved {
		var re *lifecycle.ReservedError
		if errors.As(res.CanRelease(d), &re) {
			st.UnverifiedCleanups += len(re.Unverified)
		}
	}
}

// close closes every adapter verified; nil when every tree was proven gone. Opens
// under way end first (their context, base, has ended), so none outlives it.
func (s *adapterSet) close(ctx context.Context) error {
	err := s.reg.Close(ctx)
	s.opens.Wait()
	return err
}

// mapError turns an adapter-layer error into a control-plane error: the adapter
// protocol's code and outcome are kept in the details (CallDetails).
func mapError(err error, path, method string) *Error {
	d := CallDetails{Adapter: path, Method: method}
	var ce *runtime.CallError
	var oe *lifecycle.OpenError
	var ve *wire.ViolationError
	if errors.As(err, &ve) {
		d.Violation = ve.Kind.String()
		if ve.Err != nil {
			d.ViolationDetail = ve.Err.Error()
		}
	}
	switch {
	case errors.As(err, &ce):
		d.AdapterCode, d.Uncertain, d.NeverStarted = string(ce.Code), ce.Uncertain, ce.NeverStarted
		if ce.RawCode != string(ce.Code) {
			d.RawCode = ce.RawCode
		}
		switch {
		case errors.Is(err, runtime.ErrUnknownMethod):
			return newError(CodeNotImplemented, d, "adapter does not advertise method %q", method)
		case errors.Is(err, runtime.ErrClosed):
			return newError(CodeInternal, d, "daemon is shutting down")
		case ce.Code == wire.CodeInvalid:
			return newError(CodeInvalidParams, d, "adapter refused the call: %s", ce.Message)
		}
		return newError(CodeTransportError, d, "%s", ce.Message)
	case errors.As(err, &oe):
		d.Stage = string(oe.Stage)
		if oe.Cleanup != nil {
			d.Cleanup = oe.Cleanup.Error()
		}
		if errors.Is(err, runtime.ErrClosed) {
			return newError(CodeInternal, d, "daemon is shutting down")
		}
		return newError(CodeTransportError, d, "adapter did not start: %v", oe.Err)
	case errors.Is(err, runtime.ErrClosed):
		return newError(CodeInternal, d, "daemon is shutting down")
	case errors.Is(err, context.DeadlineExceeded):
		d.AdapterCode, d.NeverStarted = string(wire.CodeDeadline), true
		return newError(CodeTransportError, d, "the call's deadline passed while the adapter was starting")
	case errors.Is(err, context.Canceled):
		d.AdapterCode, d.NeverStarted = string(wire.CodeAborted), true
		return newError(CodeInternal, d, "request cancelled: the client left or the daemon is shutting down")
	}
	return newError(CodeInternal, d, "%v", err)
}

// rawObject reports whether p is absent or one JSON object.
func rawObject(p json.RawMessage) bool {
	return len(p) == 0 || proto.ValidateParams(p) == nil
}

// droppedStatus converts the mechanisms a supervision dropped; nil when none was.
func droppedStatus(s platform.Supervision) []DroppedMechanism {
	var out []DroppedMechanism
	for _, d := range s.Dropped {
		out = append(out, DroppedMechanism{Mechanism: d.Mechanism.String(), Reason: d.Reason})
	}
	return out
}
