package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Adapter is one adapter reached through a daemon, made by [Client.Adapter]. It is a
// registry.Caller: registry.NewClient binds a contract to it and registry.Call calls
// it, with the same checks and the same errors as for an adapter the host embeds (a
// *registry.Handle). It is safe for concurrent use, and lives as long as its Client.
type Adapter struct {
	c   *Client
	ref string
	cat *wire.Catalog
}

// Adapter asks the daemon for the adapter that ref names (NAME, NAME@CONSTRAINT or an
// absolute path, as in [SendParams]), which it opens if no client has, and returns it
// with the catalog it advertised, for a typed client:
//
//	a, err := c.Adapter(ctx, "thermometer")
//	dev, err := registry.NewClient(a, device.Service) // catalog checked: service, version, methods
//	reading, err := registry.Call(ctx, dev, device.Read, device.ReadParams{Probe: "inlet"})
//
// Its errors are those of registry.Registry.Open for ref: a *discovery.NotFoundError,
// a *registry.RefusedError, a *lifecycle.OpenError (whose Err is a
// *lifecycle.BackoffError while the adapter's starts back off), each with the daemon's
// *Error in its chain too; or the connection's. It needs a daemon that knows
// Capabilities' "adapter" param (an older one answers invalid_params).
func (c *Client) Adapter(ctx context.Context, ref string) (*Adapter, error) {
	if ref == "" {
		return nil, newError(CodeInvalidParams, nil, "params: adapter is required")
	}
	r, err := call[CapabilitiesResult](ctx, c, methodCapabilities, capabilitiesParams{Adapter: ref}, nil)
	if err != nil {
		return nil, bindError(err, ref)
	}
	if len(r.Adapters) != 1 {
		return nil, fmt.Errorf("%w: Capabilities of %q: %d adapters in the answer, want 1", ErrProtocol, ref, len(r.Adapters))
	}
	if e := r.Adapters[0].Error; e != nil {
		return nil, e
	}
	cat := &wire.Catalog{Protocol: limits.ProtocolVersion, Services: r.Adapters[0].Services}
	return &Adapter{c: c, ref: ref, cat: cat}, nil
}

// Catalog returns the catalog the adapter advertised when [Client.Adapter] asked for
// it. A new version the daemon lets take over must offer every service and method of
// the version it replaces, so a contract bound to it stays satisfied. a may be nil.
func (a *Adapter) Catalog() *wire.Catalog {
	if a == nil {
		return nil
	}
	return a.cat
}

// Call calls method through the daemon (a Send to the adapter's reference). ctx's
// deadline, when it comes before the protocol's call deadline, is the Send's
// timeout. Errors are those of registry.Handle.Call: a *runtime.CallError with the
// adapter's code and outcome (runtime.CodeOf, IsUncertain, IsNeverStarted), whose
// Cause chain holds what the embedded path's holds (runtime.ErrUnknownMethod, a
// *wire.ViolationError, a *lifecycle.BackoffError, a *registry.RefusedError, a
// *discovery.NotFoundError ...) and the daemon's *Error. A call whose connection to the
// daemon ended under way is uncertain and matches [ErrOutcomeUncertain]; so is one
// whose ctx ended after it was sent, since the daemon finishes it.
func (a *Adapter) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if ctx == nil {
		return nil, &runtime.CallError{Method: method, Code: wire.CodeInvalid, NeverStarted: true, Message: "nil context", Cause: runtime.ErrNilContext}
	}
	if ctx.Err() != nil {
		return nil, runtime.ContextError(ctx, method)
	}
	p := SendParams{Adapter: a.ref, Method: method, Params: params}
	if dl, ok := ctx.Deadline(); ok {
		if ms := (time.Until(dl) + time.Millisecond - 1).Milliseconds(); ms < bound.Call(nil).Milliseconds() {
			p.TimeoutMS = max(ms, 1)
		}
	}
	res, err := call[SendResult](ctx, a.c, methodSend, p, nil)
	if err != nil {
		return nil, callError(ctx, a.ref, method, err)
	}
	return res.Value, nil
}

// bindError is the error of the embedded path's open of ref that a failed
// Capabilities of ref stands for: err with the typed error beside the daemon's.
func bindError(err error, ref string) error {
	var cp *Error
	if errors.As(err, &cp) {
		d, _ := cp.CallDetails()
		if typed := embedded(cp, d, ref); typed != nil {
			return &viaDaemon{cp: cp, typed: typed}
		}
	}
	return err
}

// callError is the error of the embedded path that a failed Send's err stands for.
func callError(ctx context.Context, ref, method string, err error) error {
	var cp *Error
	switch {
	case errors.As(err, &cp):
		d, _ := cp.CallDetails()
		ce := &runtime.CallError{Method: method, Code: wire.Code(d.AdapterCode), RawCode: d.RawCode,
			Message: strings.TrimPrefix(cp.Message, refusedCall), Uncertain: d.Uncertain, NeverStarted: d.NeverStarted,
			Cause: &viaDaemon{cp: cp, typed: embedded(cp, d, ref)}}
		if ce.Code == "" {
			// The daemon refused the Send before any adapter was called.
			ce.Code, ce.NeverStarted = daemonCode(cp.Code), true
		} else if ce.RawCode == "" && !ce.Uncertain && !ce.NeverStarted {
			ce.RawCode = d.AdapterCode // an adapter's reply: its code as it sent it
		}
		return ce
	case errors.Is(err, ErrOutcomeUncertain):
		return &runtime.CallError{Method: method, Code: wire.CodeClosed, Message: "the daemon's connection ended with the call under way",
			Uncertain: true, Cause: err}
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		ce := runtime.ContextError(ctx, method)
		ce.NeverStarted, ce.Uncertain = false, true // sent: the daemon carries it out
		return ce
	case errors.Is(err, runtime.ErrClosed):
		return &runtime.CallError{Method: method, Code: wire.CodeClosed, Message: "the daemon's connection has ended", NeverStarted: true, Cause: err}
	}
	return &runtime.CallError{Method: method, Code: wire.CodeUnavailable, Message: "the daemon could not be asked", Cause: err}
}

// daemonCode is the adapter protocol's code for a Send the daemon refused itself.
func daemonCode(c Code) wire.Code {
	switch c {
	case CodePermissionDenied:
		return wire.CodeDenied
	case CodeInvalidParams, CodeFrameTooLarge:
		return wire.CodeInvalid
	case CodeInternal:
		return wire.CodeClosed // the daemon is shutting down
	}
	return wire.CodeUnavailable
}

// embedded returns the error of the embedded path that the daemon's error cp (with
// its details d) stands for, beside a *runtime.CallError; nil when there is none.
func embedded(cp *Error, d CallDetails, ref string) error {
	if cp.Code == CodeNotFound {
		nf := &discovery.NotFoundError{Err: discovery.ErrNotFound, Candidates: d.Candidates}
		if d.NotFound == notFoundVersion {
			nf.Err = discovery.ErrNoMatchingVersion
		}
		nf.Ref, _ = discovery.ParseRef(ref)
		return nf
	}
	if d.Refusal != nil {
		return &registry.RefusedError{Refusal: *d.Refusal}
	}
	var cause error
	if b := d.Backoff; b != nil {
		be := &lifecycle.BackoffError{Name: d.Adapter, Failures: b.Failures}
		if b.NextTry != nil {
			be.Retry = max(time.Until(*b.NextTry), 0)
		}
		if b.LastError != "" {
			be.Cause = errors.New(b.LastError)
		}
		cause = be
	}
	if d.Stage != "" {
		oe := &lifecycle.OpenError{Path: d.Adapter, Stage: lifecycle.Stage(d.Stage), Err: cause}
		if oe.Err == nil {
			oe.Err = errors.New(cp.Message)
		}
		if d.Cleanup != "" {
			oe.Cleanup = errors.New(d.Cleanup)
		}
		return oe
	}
	if cause != nil {
		return cause
	}
	if d.Violation != "" {
		for v := wire.ProcessExited; v < wire.HostFrame; v++ {
			if v.String() == d.Violation {
				ve := &wire.ViolationError{Kind: v}
				if d.ViolationDetail != "" {
					ve.Err = errors.New(d.ViolationDetail)
				}
				return ve
			}
		}
	}
	switch {
	case cp.Code == CodeNotImplemented:
		return runtime.ErrUnknownMethod
	case d.AdapterCode == string(wire.CodeDeadline):
		return context.DeadlineExceeded // the Send's timeout, the caller's deadline
	}
	return nil
}

// viaDaemon is a daemon's error and the error of the embedded path it stands for
// (nil when none): errors.Is and errors.As match both.
type viaDaemon struct {
	cp    *Error
	typed error
}

func (e *viaDaemon) Error() string { return "through the daemon: " + e.cp.Error() }

func (e *viaDaemon) Unwrap() []error {
	if e.typed == nil {
		return []error{e.cp}
	}
	return []error{e.typed, e.cp}
}
