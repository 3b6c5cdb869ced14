package registry

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Handle is one open adapter of a Registry. A Handle opened by NAME[@CONSTRAINT] in a
// Registry with Config.Upgrade follows new versions of its adapter (see [Upgrade]): its
// calls go to whichever version serves at the time, and Path, Catalog, Status and
// Stats describe that one.
type Handle struct {
	reg  *Registry
	name string
	// ref is the reference a handle that follows upgrades was opened by (with the
	// default constraint filled in); nil for one that does not follow them.
	ref     *discovery.Ref
	cfgJSON json.RawMessage

	cur atomic.Pointer[gen] // serves new calls; never nil

	// upgrading serializes the upgrades of this handle; stop ends one under way and the
	// drains (Close).
	upgrading sync.Mutex
	stopCtx   context.Context
	stop      context.CancelFunc
	retiring  sync.WaitGroup // the goroutines draining replaced versions

	mu       sync.Mutex
	bound    []*contract.Service // contracts of the typed clients made on this handle
	draining map[*gen]struct{}
	upgrades int
	upErr    error
	retired  int   // restarts of the versions replaced
	retErr   error // cleanups of replaced versions not verified
	closed   bool
}

// gen is one version of a handle's adapter: its supervisor and the calls it serves.
type gen struct {
	sup     *lifecycle.Supervisor
	path    string
	version *version.Version // nil when the file name carries none
	digest  string           // the pinned digest it was started with, "" when none
	// firstCatalog is the catalog of its first start: what an upgrade is checked
	// against while it is being restarted.
	firstCatalog *wire.Catalog

	active    atomic.Int64 // calls that entered this generation and have not left
	retiring  atomic.Bool
	drainOnce sync.Once
	drained   chan struct{} // closed once retiring with no call active
}

func newGen(sup *lifecycle.Supervisor, path string, v *version.Version, digest string) *gen {
	g := &gen{sup: sup, path: path, version: v, digest: digest, drained: make(chan struct{})}
	if a := sup.Current(); a != nil {
		g.firstCatalog = a.Catalog()
	}
	return g
}

// leave ends one call on g. Calls enter with active.Add(1) and check afterwards that
// g still serves; retire marks g first and looks at active afterwards: whichever comes
// second sees the other, so the last call out of a retired generation is never missed.
func (g *gen) leave() {
	if g.active.Add(-1) == 0 && g.retiring.Load() {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

// retire marks g as no longer taking calls.
func (g *gen) retire() {
	g.retiring.Store(true)
	if g.active.Load() == 0 {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

func (g *gen) versionString() string {
	if g.version == nil {
		return ""
	}
	return g.version.String()
}

// Path returns the executable's absolute path of the version serving new calls.
func (h *Handle) Path() string { return h.cur.Load().path }

// Name returns the adapter's name (from its file name where it follows the discovery
// convention, else the file's base name).
func (h *Handle) Name() string { return h.name }

// Status is a snapshot of a Handle's adapter process. The process itself is not handed
// out: calls go through [Handle.Call] (or a typed client), which handle restarts, and
// only [Handle.Close] ends the adapter.
type Status struct {
	// Running: an adapter process is connected; false while it is being restarted or
	// after it ended for good (the other fields are then zero).
	Running bool
	// Pid is the adapter process's id.
	Pid int
	// Mechanism says how the adapter's process tree is supervised.
	Mechanism platform.Mechanism
	// Supervision also says why any stronger mechanism is not in effect (see
	// lifecycle.Adapter.Supervision).
	Supervision platform.Supervision
	// InFlight is the number of requests sent and not yet replied to.
	InFlight int
	// LimitErr is nil when every resource limit was applied, else why not (see
	// lifecycle.Adapter.LimitErr).
	LimitErr error
}

// Status returns a snapshot of the running adapter (the version serving new calls).
func (h *Handle) Status() Status {
	a := h.cur.Load().sup.Current()
	if a == nil || a.Err() != nil {
		return Status{}
	}
	return Status{Running: true, Pid: a.Pid(), Mechanism: a.Supervision().Mechanism, Supervision: a.Supervision(), InFlight: a.InFlight(), LimitErr: a.LimitErr()}
}

// Catalog returns the running adapter's catalog, or nil when none is running.
func (h *Handle) Catalog() *wire.Catalog {
	if a := h.cur.Load().sup.Current(); a != nil {
		return a.Catalog()
	}
	return nil
}

// Call calls a method with raw JSON params and returns the raw JSON result: the raw way
// to call, beside the typed [Call]. Errors are the runtime's typed errors
// (*runtime.CallError).
//
// While a new version takes over (see [Upgrade]), a call goes to the version serving
// when it begins and finishes there; a call that found its version closed before
// anything of it was sent is made on the version serving now.
func (h *Handle) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return h.Do(ctx, &handover.Request{Method: method, Params: params})
}

// Do makes the call req describes as [Handle.Call] does, handing req down to the
// connection (see [runtime.Conn.Do]): the typed [Call] calls through it; req must
// not be nil.
func (h *Handle) Do(ctx context.Context, req *handover.Request) (json.RawMessage, error) {
	for {
		g := h.cur.Load()
		g.active.Add(1)
		if h.cur.Load() != g { // replaced meanwhile: its drain may have seen no call
			g.leave()
			continue
		}
		res, err := g.sup.Do(ctx, req)
		g.leave()
		if err != nil && h.cur.Load() != g && runtime.IsNeverStarted(err) && errors.Is(err, lifecycle.ErrGaveUp) {
			continue // the replaced version was closed before the call reached it
		}
		return res, err
	}
}

// bind records a contract a typed client of h uses: an upgrade must keep it.
func (h *Handle) bind(svc *contract.Service) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.bound {
		if s == svc {
			return
		}
	}
	h.bound = append(h.bound, svc)
}

// Close closes the adapter verified (see lifecycle.Adapter.Close): nil when its
// process tree was proven gone. Versions still finishing calls after an upgrade are
// closed at once, their calls in flight failing as closed.
func (h *Handle) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.stop() // ends an upgrade under way and cuts the drains short
	h.upgrading.Lock()
	err := h.cur.Load().sup.Close()
	h.upgrading.Unlock()
	h.retiring.Wait()
	h.mu.Lock()
	err = errors.Join(err, h.retErr)
	h.mu.Unlock()
	h.reg.mu.Lock()
	delete(h.reg.handles, h)
	h.reg.mu.Unlock()
	return err
}
