package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// adapterSet is the daemon's set of adapters: discovered in its directories, opened
// lazily on first use through a registry (so supervised with a restart policy, and
// following upgrades), and closed verified at shutdown.
//
// An adapter asked for by NAME, or by a reference that resolves to the version its
// name serves, is one slot per name, which follows new versions of it (the registry's
// Upgrade); one asked for by path or by a constraint that selects another version is
// a slot of that file, which keeps it.
type adapterSet struct {
	reg    *registry.Registry
	lim    *limits.Limits
	log    hclog.Logger
	base   context.Context // ends at shutdown: bounds opens, which no client owns
	exits  atomic.Uint64
	calls  atomic.Uint64
	flight atomic.Int64
	opens  sync.WaitGroup // openSlot and scan goroutines
	saver  *refusedSaver  // keeps the record of refused files; nil without a state directory

	mu          sync.Mutex
	open        map[slotKey]*slot
	droppedRest int // restarts of handles dropped after they gave up
	// failing are the slots whose last open failed, with the executable's path: they
	// are shown in status (their start backoff) until an open of them succeeds.
	failing map[slotKey]string

	scanEvery time.Duration // a finished scan younger than this is shared
	scanMu    sync.Mutex
	scanning  *scanRun // the scan under way, or nil
	lastScan  *scanRun // the last finished scan
}

// scanRun is one scan of the directories, shared by every Discover that asks while
// it runs, and by those that ask within scanEvery after it ended.
type scanRun struct {
	done chan struct{}
	res  *discovery.Result
	err  error
	at   time.Time // when it ended
}

// slotKey names a slot: an adapter name (following upgrades) or an executable path.
type slotKey struct{ name, path string }

// slot is one adapter opened or being opened.
type slot struct {
	key   slotKey
	ready chan struct{} // closed when h or err is set
	h     *registry.Handle
	err   error
}

func newAdapterSet(base context.Context, cfg *ServerConfig, log hclog.Logger, refused []registry.Refusal) *adapterSet {
	s := &adapterSet{lim: cfg.Limits, log: log, base: base, open: make(map[slotKey]*slot), scanEvery: cfg.RescanInterval}
	policy := defaultRestart
	if cfg.Restart != nil {
		policy = *cfg.Restart
	}
	up := registry.Upgrade{}
	if cfg.Upgrade != nil {
		up = *cfg.Upgrade
	}
	rcfg := &registry.Config{
		Dirs: cfg.Dirs, Env: cfg.Env, Stderr: cfg.Stderr, Limits: cfg.Limits, Logger: adapterLogger(cfg, log), Restart: policy, LogTail: logTailLines,
		Sandbox: cfg.Sandbox, Sandboxes: cfg.Sandboxes, AllowGroupWritable: cfg.AllowGroupWritable, Isolation: cfg.Isolation,
		OnExit: func(ev lifecycle.ExitEvent) {
			s.exits.Add(1)
			log.Warn("adapter ended on its own", "adapter", ev.Adapter.Path(), "cause", ev.Cause, "cleanup", ev.Cleanup)
		},
		Upgrade: &up, Refused: refused,
	}
	if cfg.StateDir != "" {
		s.saver = newRefusedSaver(base, cfg.StateDir, log)
		rcfg.OnRefused = s.saver.save
	}
	s.reg = registry.New(rcfg)
	return s
}

// scanHook, when set (tests only), runs at the start of every scan of the directories;
// scanWaitHook before a rescan caller waits for the scan it joined (given its end).
var (
	scanHook     func()
	scanWaitHook func(done <-chan struct{})
)

// rescan returns a scan of the directories (the registry keeps it for resolving
// references) no older than the rescan interval: concurrent Discover streams share
// one scan instead of each scanning every directory every interval. The scan runs
// bounded by the daemon's life, not by the client that started it; ctx bounds only
// this caller's wait.
func (s *adapterSet) rescan(ctx context.Context) (*discovery.Result, error) {
	s.scanMu.Lock()
	if l := s.lastScan; l != nil && l.err == nil && time.Since(l.at) < s.scanEvery {
		s.scanMu.Unlock()
		return l.res, nil
	}
	run := s.scanning
	if run == nil {
		run = &scanRun{done: make(chan struct{})}
		s.scanning = run
		s.opens.Add(1)
		go func() {
			defer s.opens.Done()
			if scanHook != nil {
				scanHook()
			}
			res, err := s.reg.Discover(s.base)
			s.scanMu.Lock()
			run.res, run.err, run.at = res, err, time.Now()
			s.scanning, s.lastScan = nil, run
			s.scanMu.Unlock()
			close(run.done)
		}()
	}
	s.scanMu.Unlock()
	if scanWaitHook != nil {
		scanWaitHook(run.done)
	}
	select {
	case <-run.done:
		if err := ctx.Err(); err != nil {
			// Both were ready (a quick scan for a caller already gone): the caller
			// is told it is gone, whichever the select picked.
			return nil, err
		}
		return run.res, run.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// infoOf describes a discovered adapter; the file's size and time come from the
// file it resolves to.
func infoOf(a discovery.Adapter) AdapterInfo {
	info, _ := presentInfo(a)
	return info
}

// presentInfo is infoOf, and whether the file is still there to be described.
func presentInfo(a discovery.Adapter) (AdapterInfo, bool) {
	info := AdapterInfo{Name: a.Name, Version: a.Version.String(), Path: a.Path, Dir: a.Dir}
	fi, err := os.Stat(a.Resolved)
	if err != nil {
		return info, false
	}
	info.Size, info.ModTime = fi.Size(), fi.ModTime().UTC()
	return info, true
}

// handleInfo describes the version an open adapter serves new calls with.
func handleInfo(h *registry.Handle) AdapterInfo {
	info := AdapterInfo{Name: h.Name(), Version: h.Upgrades().Version, Path: h.Path(), Dir: filepath.Dir(h.Path())}
	if fi, err := os.Stat(info.Path); err == nil {
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
	var rf *registry.RefusedError
	switch {
	case errors.As(err, &rf):
		return discovery.Adapter{}, mapError(err, rf.Refusal.Path, "")
	case errors.Is(err, platform.ErrNotAbsolute):
		return discovery.Adapter{}, newError(CodeInvalidParams, nil, "adapter path %q is not absolute", ref)
	case errors.As(err, &re):
		return discovery.Adapter{}, newError(CodeInvalidParams, nil, "adapter reference: %v", err)
	case errors.As(err, &nf) || errors.Is(err, discovery.ErrNotFound):
		return discovery.Adapter{}, newError(CodeNotFound, notFoundDetails(nf), "adapter %q is not among the discovered adapters: %v", ref, err)
	}
	return discovery.Adapter{}, newError(CodeInternal, nil, "scanning the adapter directories: %v", err)
}

// keyFor returns the slot a reference ref, resolved to a, is served by: its name's,
// when ref is a bare NAME or a is the version the name serves (or would serve: the
// version a bare NAME selects); else a's own.
func (s *adapterSet) keyFor(ctx context.Context, ref string, a discovery.Adapter) slotKey {
	named := slotKey{name: a.Name}
	if ref == a.Name {
		return named
	}
	s.mu.Lock()
	sl := s.open[named]
	s.mu.Unlock()
	if sl != nil {
		select {
		case <-sl.ready:
			if sl.h != nil && sl.h.Path() == a.Path {
				return named
			}
			return slotKey{path: a.Path}
		default:
		}
	}
	if newest, err := s.reg.Lookup(ctx, a.Name); err == nil && newest.Path == a.Path && sl == nil {
		return named
	}
	return slotKey{path: a.Path}
}

// handle returns the open adapter of key, opening it when no client has yet. The open
// is bounded by the call deadline and by the daemon's life, not by the client that
// asked first; ctx bounds only this caller's wait. A failed open is not kept.
func (s *adapterSet) handle(ctx context.Context, key slotKey) (*registry.Handle, error) {
	s.mu.Lock()
	sl := s.open[key]
	if sl == nil {
		sl = &slot{key: key, ready: make(chan struct{})}
		s.open[key] = sl
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
	ctx, cancel := context.WithTimeout(s.base, bound.Call(s.lim))
	defer cancel()
	ref := sl.key.path
	if ref == "" {
		ref = sl.key.name
	}
	h, err := s.reg.Open(ctx, ref, nil)
	var oe *lifecycle.OpenError
	s.mu.Lock()
	sl.h, sl.err = h, err
	if err != nil && s.open[sl.key] == sl {
		delete(s.open, sl.key)
	}
	switch {
	case err == nil:
		delete(s.failing, sl.key)
	case errors.As(err, &oe) && oe.Stage != lifecycle.StageConfig && !errors.Is(err, runtime.ErrClosed):
		if s.failing == nil {
			s.failing = make(map[slotKey]string)
		}
		s.failing[sl.key] = oe.Path
	}
	s.mu.Unlock()
	close(sl.ready)
	var be *lifecycle.BackoffError
	switch {
	case errors.As(err, &be):
		// Refused at once by the start backoff: the failure it waits out was
		// logged once, with the opens refused meanwhile.
		s.log.Debug("adapter not opened: backing off", "adapter", ref, "error", err)
	case err != nil:
		s.log.Warn("adapter did not open", "adapter", ref, "error", err)
	}
}

// drop forgets an adapter whose supervisor gave up, closing it verified, so that the
// next use opens it afresh.
func (s *adapterSet) drop(key slotKey, h *registry.Handle) {
	s.mu.Lock()
	if sl := s.open[key]; sl != nil && sl.h == h {
		delete(s.open, key)
		s.droppedRest += h.Stats().Restarts
	} else {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if err := h.Close(); err != nil {
		s.log.Warn("adapter cleanup not verified", "adapter", h.Path(), "error", err)
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
	key := s.keyFor(ctx, p.Adapter, a)
	h, err := s.handle(ctx, key)
	if err != nil {
		return nil, mapError(err, a.Path, p.Method)
	}
	v, err := h.Call(ctx, p.Method, p.Params)
	if err != nil {
		if errors.Is(err, lifecycle.ErrGaveUp) {
			s.drop(key, h)
		}
		return nil, mapError(err, h.Path(), p.Method)
	}
	return &SendResult{Adapter: handleInfo(h), Value: v}, nil
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
			h, err := s.handle(ctx, s.keyFor(ctx, a.Path, a))
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

// handles returns the handles of the adapters open (those still opening or that
// failed to open left out), and the restarts of handles dropped after they gave up.
func (s *adapterSet) handles() ([]*registry.Handle, int) {
	s.mu.Lock()
	slots := make([]*slot, 0, len(s.open))
	for _, sl := range s.open {
		slots = append(slots, sl)
	}
	dropped := s.droppedRest
	s.mu.Unlock()
	hs := make([]*registry.Handle, 0, len(slots))
	for _, sl := range slots {
		select {
		case <-sl.ready:
		default:
			continue // still opening
		}
		if sl.h != nil {
			hs = append(hs, sl.h)
		}
	}
	return hs, dropped
}

// status fills the adapter part of a StatusResult.
func (s *adapterSet) status(st *StatusResult) {
	hs, dropped := s.handles()
	st.Restarts = dropped
	st.Adapters = []AdapterStatus{}
	for _, h := range hs {
		as := adapterStatus(h)
		st.Restarts += as.Restarts
		st.Adapters = append(st.Adapters, as)
	}
	sort.Slice(st.Adapters, func(i, j int) bool {
		a, b := st.Adapters[i], st.Adapters[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Path < b.Path
	})
	st.Adapters = append(st.Adapters, s.failingStatus(hs)...)
	sort.SliceStable(st.Adapters, func(i, j int) bool {
		a, b := st.Adapters[i], st.Adapters[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Path < b.Path
	})
	st.Refused = s.refusedStatus()
	if s.saver != nil {
		st.RefusedNotSaved, st.RefusedSaveFailures = s.saver.status()
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

// adapterStatus is the status of one open adapter.
func adapterStatus(h *registry.Handle) AdapterStatus {
	up := h.Upgrades()
	stats := h.Stats()
	as := AdapterStatus{AdapterInfo: handleInfo(h), State: "restarting", Restarts: stats.Restarts, AdapterFigures: figuresOf(stats),
		Upgrades: up.Upgrades, Draining: []DrainingStatus{}}
	if up.Err != nil {
		as.UpgradeError = up.Err.Error()
	}
	for _, d := range up.Draining {
		as.Draining = append(as.Draining, DrainingStatus{Version: d.Version, Path: d.Path, PID: d.Pid, InFlight: d.InFlight})
	}
	backoffStatus(&as, stats.Backoff)
	as.Abandoned = stats.Abandoned
	if hs := h.Status(); hs.Running {
		as.State, as.PID, as.Mechanism, as.InFlight = "running", hs.Pid, hs.Mechanism.String(), hs.InFlight
		as.Dropped = droppedStatus(hs.Supervision)
		as.Sandbox = hs.Supervision.Sandbox
	}
	return as
}

// upgrade looks for new versions of the adapters open (of the one named, when name
// is set) and lets them take over, then reports the adapters concerned. With retry,
// the refusals of name's files are forgotten first.
func (s *adapterSet) upgrade(ctx context.Context, name string, retry bool) (*UpgradeResult, *Error) {
	var names []string
	if name != "" {
		if ref, err := discovery.ParseRef(name); err != nil || ref.Name != name {
			return nil, newError(CodeInvalidParams, nil, "params: adapter %q is not an adapter name", name)
		}
		names = []string{name}
	}
	if name != "" && !retry {
		// Not open yet: opened now, under the rule of every start (a version that
		// fails is refused, an older one serves), as its first call would.
		if _, err := s.reg.Lookup(ctx, name); err == nil {
			if _, err := s.handle(ctx, slotKey{name: name}); err != nil && ctx.Err() != nil {
				return nil, newError(CodeInternal, nil, "request cancelled: the client left or the daemon is shutting down")
			}
		}
	}
	if retry {
		if name == "" {
			return nil, newError(CodeInvalidParams, nil, "params: retry needs an adapter name")
		}
		for _, rf := range s.reg.Retry(name) {
			s.log.Info("refused adapter file to be tried again", "adapter", name, "version", rf.Version, "path", rf.Path)
		}
	}
	if err := s.reg.Rescan(ctx, names...); err != nil {
		if ctx.Err() != nil || errors.Is(err, runtime.ErrClosed) {
			return nil, newError(CodeInternal, nil, "request cancelled: the client left or the daemon is shutting down")
		}
		return nil, newError(CodeTransportError, nil, "scanning the adapter directories: %v", err)
	}
	var st StatusResult
	s.status(&st)
	out := &UpgradeResult{Adapters: []AdapterStatus{}, RefusedNotSaved: st.RefusedNotSaved}
	for _, as := range st.Adapters {
		if name == "" || as.Name == name {
			out.Adapters = append(out.Adapters, as)
		}
	}
	return out, nil
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
	var rf *registry.RefusedError
	if errors.As(err, &rf) {
		// Before the lifecycle's errors: a restart refused is an *OpenError too.
		d.Stage, d.Refusal = stageRefused, &rf.Refusal
		return newError(CodeTransportError, d, "%s", refusedMessage(rf.Refusal))
	}
	d.Backoff = backoffDetails(err)
	if errors.As(err, &ve) {
		d.Violation = ve.Kind.String()
		if ve.Err != nil {
			d.ViolationDetail = ve.Err.Error()
		}
	}
	// A start failure: an OpenError with no call error outside it. The adapter did not
	// start, so the call was never sent, whatever became of the initialize request
	// inside the OpenError (that one may well be uncertain).
	var inner *runtime.CallError
	startFailed := errors.As(err, &oe) && (!errors.As(err, &ce) || errors.As(oe.Err, &inner) && inner == ce)
	switch {
	case startFailed:
		d.Stage, d.NeverStarted = string(oe.Stage), true
		if inner != nil {
			d.AdapterCode = string(inner.Code)
		}
		if oe.Cleanup != nil {
			d.Cleanup = oe.Cleanup.Error()
		}
		if errors.Is(err, runtime.ErrClosed) {
			return newError(CodeInternal, d, "daemon is shutting down")
		}
		return newError(CodeTransportError, d, "adapter did not start: %v", oe.Err)
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
			return newError(CodeInvalidParams, d, "%s%s", refusedCall, ce.Message)
		}
		var we *lifecycle.WedgedError
		if errors.As(err, &we) && we.Err != nil {
			// No slot: say why, not only that the deadline passed.
			return newError(CodeTransportError, d, "%s: %v", ce.Message, we)
		}
		return newError(CodeTransportError, d, "%s", ce.Message)
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
