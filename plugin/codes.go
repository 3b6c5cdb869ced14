package plugin

import "github.com/adapterkit/adapterkit/runtime/wire"

// Code is an error code of the protocol (R28). It is the same type as wire.Code, so an
// adapter needs only this package to choose the code of an error reply:
//
//	return Reading{}, plugin.Errorf(plugin.CodeInvalid, "unknown probe %q", p.Probe)
type Code = wire.Code

// The eight error codes of the protocol (docs/protocol.md#error-codes): the same values
// as wire.CodeInvalid ... wire.CodeDeadline.
const (
	// CodeInvalid: the request is wrong (bad params, before initialize, ...).
	CodeInvalid = wire.CodeInvalid
	// CodeClosed: what the request refers to is closed.
	CodeClosed = wire.CodeClosed
	// CodeAborted: the request was cancelled.
	CodeAborted = wire.CodeAborted
	// CodeDenied: the adapter refuses on purpose (permissions, policy).
	CodeDenied = wire.CodeDenied
	// CodeUnavailable: the method or resource is not there.
	CodeUnavailable = wire.CodeUnavailable
	// CodeBusy: too many requests in flight, or the resource is busy.
	CodeBusy = wire.CodeBusy
	// CodeFailed: anything else went wrong.
	CodeFailed = wire.CodeFailed
	// CodeDeadline: the request ran out of time.
	CodeDeadline = wire.CodeDeadline
)
