package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/internal/sentinel"
	"github.com/adapterkit/adapterkit/wire"
)

// Causes of errors the host decides itself. Each is the Cause of a *CallError.
var (
	// ErrClosed is the one "closed by the host" error of the whole module: the cause
	// after the host closed the connection ([Conn.Close]), and of every use of
	// something the host closed: a process tree (package platform), a supervisor
	// (lifecycle), a registry, handle or stream (registry). errors.Is(err, ErrClosed)
	// holds for all of them.
	ErrClosed = sentinel.ErrClosed
	// errNotInitialized refuses a call before a successful initialize.
	errNotInitialized = errors.New("runtime: connection not initialized")
	// errAlreadyInitialized refuses a second initialize.
	errAlreadyInitialized = errors.New("runtime: connection already initialized or initializing")
	// ErrUnknownMethod refuses a method the catalog does not advertise.
	ErrUnknownMethod = errors.New("runtime: method not advertised by the adapter")
	// ErrCallDeadline is the cause a host gives a context with which it bounds a call
	// by the protocol's call deadline on its caller's behalf, when the caller chose
	// none (context.WithTimeoutCause(ctx, d, ErrCallDeadline)): that deadline passing
	// is then the adapter's doing, as when the runtime applies the deadline itself,
	// not the caller's (see lifecycle.MethodStats.CallerErrors).
	// errors.Is(ErrCallDeadline, context.DeadlineExceeded) holds.
	ErrCallDeadline = fmt.Errorf("runtime: the protocol's call deadline passed: %w", context.DeadlineExceeded)
	// ErrRequestTooLarge refuses a request whose frame would exceed the frame limit.
	ErrRequestTooLarge = errors.New("runtime: request exceeds the adapter frame limit")
	// ErrInvalidParams refuses params (or an initialize configuration) that are not
	// exactly one JSON object: also the cause of an open (package lifecycle) whose
	// configuration is not one.
	ErrInvalidParams = errors.New("not one JSON object")
	// errNoSlot is the cause of a busy refusal when Options.FailFast is set and all
	// in-flight slots are taken: a never-started busy error says it, no sentinel is
	// needed.
	errNoSlot = errors.New("runtime: no free in-flight slot")
	// ErrNilContext is the one nil-context error of the whole module: every entry point
	// that takes a context refuses a nil one with an error that errors.Is(err,
	// ErrNilContext) matches, instead of panicking in the caller's goroutine. A call (or
	// initialize) returns it as the Cause of a never-started *CallError with code
	// invalid; an open or start returns it inside its typed error
	// (lifecycle.OpenError, platform.LaunchError); anything else returns it as it is.
	ErrNilContext = sentinel.ErrNilContext
)

// CallError is the error of a call (or of initialize). It says what is known: the code,
// whether the operation never started (nothing was sent) and whether its outcome is
// uncertain (it was sent and no reply will be delivered to the caller).
//
// [CodeOf], [IsUncertain] and [IsNeverStarted] read it through any wrapping; errors.Is
// and errors.As match anything in the Cause chain (a *wire.ViolationError, [ErrClosed],
// a context error ...).
type CallError struct {
	Method       string    // the method called
	ID           uint64    // the request identity; 0 if never sent
	Code         wire.Code // one of the eight codes
	Message      string    // the adapter's message (capped) or the host's
	RawCode      string    // the code as the adapter sent it, when it replied with an error
	Uncertain    bool      // sent, and the outcome is unknown
	NeverStarted bool      // nothing was sent
	Cause        error     // why the host decided this outcome; nil for an adapter's error reply
}

// Error describes the failure in one line.
func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString("runtime: ")
	b.WriteString(e.Method)
	if e.ID != 0 {
		b.WriteString(" (id ")
		b.WriteString(strconv.FormatUint(e.ID, 10))
		b.WriteByte(')')
	}
	b.WriteString(": ")
	b.WriteString(string(e.Code))
	if e.RawCode != "" && e.RawCode != string(e.Code) {
		b.WriteString(" (sent as ")
		b.WriteString(strconv.Quote(e.RawCode))
		b.WriteByte(')')
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	switch {
	case e.NeverStarted:
		b.WriteString(" [never started]")
	case e.Uncertain:
		b.WriteString(" [outcome uncertain]")
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Cause }

// CodeOf returns the code of the first *CallError in err's chain, and "" when there is
// none (err is nil or did not come from a call).
func CodeOf(err error) wire.Code {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// IsUncertain reports whether err is a call error whose outcome is uncertain: the
// request was sent and no reply will be delivered, so the adapter may or may not have
// acted.
func IsUncertain(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Uncertain
}

// IsNeverStarted reports whether err is a call error for an operation never sent: the
// adapter did nothing, and the call may be retried as it is.
func IsNeverStarted(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.NeverStarted
}

// violation returns a *wire.ViolationError of the given kind and detail.
func violation(kind wire.Violation, err error) *wire.ViolationError {
	return &wire.ViolationError{Kind: kind, Err: err}
}
