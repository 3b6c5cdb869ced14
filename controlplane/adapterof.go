package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/lifecycle"
)

// refusedCall begins the message of a Send the adapter refused with code invalid; the
// adapter's own message follows it.
const refusedCall = "adapter refused the call: "

// The values of CallDetails.NotFound.
const (
	notFoundName    = "name"
	notFoundVersion = "version"
)

// capabilitiesOf answers Capabilities for one adapter reference: the adapter a Send
// with that reference reaches, opened if it is not, with its catalog. What keeps it
// from being had is the response's error, as a Send's would be.
func (s *adapterSet) capabilitiesOf(ctx context.Context, ref string) (*CapabilitiesResult, *Error) {
	a, cerr := s.resolve(ctx, ref)
	if cerr != nil {
		return nil, cerr
	}
	ctx, cancel := context.WithTimeout(ctx, bound.Call(s.lim))
	defer cancel()
	h, err := s.handle(ctx, s.keyFor(ctx, ref, a))
	if err != nil {
		return nil, mapError(err, a.Path, "")
	}
	cat := h.Catalog()
	if cat == nil {
		return nil, newError(CodeTransportError, CallDetails{Adapter: h.Path()}, "adapter is being restarted")
	}
	return &CapabilitiesResult{Adapters: []AdapterCapabilities{{AdapterInfo: handleInfo(h), Services: cat.Services}}}, nil
}

// notFoundDetails are the details of a not_found error for nf (which may be nil).
func notFoundDetails(nf *discovery.NotFoundError) *CallDetails {
	if nf == nil {
		return nil
	}
	d := &CallDetails{NotFound: notFoundName, Candidates: nf.Candidates}
	if errors.Is(nf.Err, discovery.ErrNoMatchingVersion) {
		d.NotFound = notFoundVersion
	}
	return d
}

// backoffDetails describes the start backoff in err's chain, or returns nil.
func backoffDetails(err error) *BackoffStatus {
	var be *lifecycle.BackoffError
	if !errors.As(err, &be) {
		return nil
	}
	next := time.Now().Add(be.Retry).UTC()
	b := &BackoffStatus{Failures: be.Failures, NextTry: &next}
	if be.Cause != nil {
		b.LastError = be.Cause.Error()
	}
	return b
}
