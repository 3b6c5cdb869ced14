package registry

import (
	"context"
	"encoding/json"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

// Handle is one open adapter of a Registry.
type Handle struct {
	reg  *Registry
	sup  *lifecycle.Supervisor
	path string
	name string
}

// Path returns the adapter executable's absolute path.
func (h *Handle) Path() string { return h.path }

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

// Status returns a snapshot of the running adapter.
func (h *Handle) Status() Status {
	a := h.sup.Current()
	if a == nil || a.Err() != nil {
		return Status{}
	}
	return Status{Running: true, Pid: a.Pid(), Mechanism: a.Mechanism(), Supervision: a.Supervision(), InFlight: a.InFlight(), LimitErr: a.LimitErr()}
}

// Catalog returns the running adapter's catalog, or nil when none is running.
func (h *Handle) Catalog() *wire.Catalog {
	if a := h.sup.Current(); a != nil {
		return a.Catalog()
	}
	return nil
}

// Call calls a method with raw JSON params and returns the raw JSON result: the raw way
// to call, beside the typed [Call]. Errors are the runtime's typed errors
// (*runtime.CallError).
func (h *Handle) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return h.sup.Call(ctx, method, params)
}

// Close closes the adapter verified (see lifecycle.Adapter.Close): nil when its
// process tree was proven gone.
func (h *Handle) Close() error {
	err := h.sup.Close()
	h.reg.mu.Lock()
	delete(h.reg.handles, h)
	h.reg.mu.Unlock()
	return err
}
