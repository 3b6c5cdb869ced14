package runtime

import (
	"errors"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime/wire"
)

// codeError is the sentinel of one wire error code; a *CallError matches it with
// errors.Is when its Code is that code.
type codeError struct{ code wire.Code }

func (e *codeError) Error() string { return "runtime: code " + string(e.code) }

// Sentinels for the eight error codes (R28). errors.Is(err, ErrBusy) reports whether err
// is a *CallError whose Code is busy, whether the adapter replied with it or the host
// decided it.
var (
	ErrInvalid     error = &codeError{wire.CodeInvalid}
	ErrClosed      error = &codeError{wire.CodeClosed}
	ErrAborted     error = &codeError{wire.CodeAborted}
	ErrDenied      error = &codeError{wire.CodeDenied}
	ErrUnavailable error = &codeError{wire.CodeUnavailable}
	ErrBusy        error = &codeError{wire.CodeBusy}
	ErrFailed      error = &codeError{wire.CodeFailed}
	ErrDeadline    error = &codeError{wire.CodeDeadline}
)

// Outcome sentinels: errors.Is(err, ErrUncertain) reports a *CallError whose outcome is
// uncertain (the request was sent and no reply was received: the adapter may or may not
// have acted, R32); errors.Is(err, ErrNeverStarted) reports one that was never sent.
var (
	ErrUncertain    = errors.New("runtime: outcome uncertain")
	ErrNeverStarted = errors.New("runtime: never started")
)

// Causes of errors the host decides itself. Each is the Cause of a *CallError.
var (
	// ErrConnClosed is the one "closed by the host" sentinel of the whole module: the
	// cause after the host closed the connection ([Conn.Close]), and, under their own
	// names, of every use of something the host closed: platform.ErrClosed (a process
	// tree handle), lifecycle (a closed supervisor's calls), registry.ErrClosed (a
	// registry or handle). errors.Is(err, ErrConnClosed) holds for all of them.
	ErrConnClosed = errors.New("closed by the host")
	// ErrNotInitialized refuses a call before a successful initialize (R18, R27, A7).
	ErrNotInitialized = errors.New("runtime: connection not initialized")
	// ErrAlreadyInitialized refuses a second initialize (A7).
	ErrAlreadyInitialized = errors.New("runtime: connection already initialized or initializing")
	// ErrUnknownMethod refuses a method the catalog does not advertise (R41, A22).
	ErrUnknownMethod = errors.New("runtime: method not advertised by the adapter")
	// ErrRequestTooLarge refuses a request whose frame would exceed the frame limit (R58, A3).
	ErrRequestTooLarge = errors.New("runtime: request exceeds the adapter frame limit")
	// ErrInvalidParams refuses params (or an initialize configuration) that are not
	// exactly one JSON object (A4, A33). It is the module's one "not a JSON object"
	// sentinel: lifecycle.ErrInvalidConfiguration is the same value.
	ErrInvalidParams = errors.New("not one JSON object")
	// ErrNoSlot is the cause of a busy refusal when [Options.FailFast] is set and all
	// in-flight slots are taken (R40, A16).
	ErrNoSlot = errors.New("runtime: no free in-flight slot")
	// ErrNilContext is the one nil-context error of the whole module: every entry point
	// that takes a context refuses a nil one with an error that errors.Is(err,
	// ErrNilContext) matches, instead of panicking in the caller's goroutine. A call (or
	// initialize) returns it as the Cause of a never-started *CallError with code
	// invalid; an open or start returns it inside its typed error
	// (lifecycle.OpenError, platform.LaunchError); anything else returns it as it is.
	ErrNilContext = proto.ErrNilContext
)

// CallError is the error of a call (or of initialize). It says what is known: the code,
// whether the operation never started (nothing was sent) and whether its outcome is
// uncertain (it was sent and no reply will be delivered to the caller).
//
// errors.Is matches the code sentinels ([ErrBusy] ...), [ErrUncertain], [ErrNeverStarted],
// and anything in the Cause chain (a [*ViolationError], [ErrConnClosed], a context error,
// a *proto.CatalogError ...).
type CallError struct {
	Method       string    // the method called
	ID           uint64    // the request identity; 0 if never sent
	Code         wire.Code // one of the eight codes
	Message      string    // the adapter's message (capped, R31) or the host's
	RawCode      string    // the code as the adapter sent it, when it replied with an error (R29)
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

// Is matches the code sentinels, [ErrUncertain] and [ErrNeverStarted].
func (e *CallError) Is(target error) bool {
	switch target {
	case ErrUncertain:
		return e.Uncertain
	case ErrNeverStarted:
		return e.NeverStarted
	}
	if ce, ok := target.(*codeError); ok {
		return ce.code == e.Code
	}
	return false
}

// CodeOf returns the code of the first *CallError in err's chain.
func CodeOf(err error) (wire.Code, bool) {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Code, true
	}
	return "", false
}

// IsUncertain reports whether err is a call error whose outcome is uncertain.
func IsUncertain(err error) bool { return errors.Is(err, ErrUncertain) }

// IsNeverStarted reports whether err is a call error for an operation never sent.
func IsNeverStarted(err error) bool { return errors.Is(err, ErrNeverStarted) }

// Violation is a kind of protocol violation (wire.Violation, re-exported): the kinds
// below are the adapter's (R51-R57). Each ends the connection. A Violation is itself an
// error, so the exported sentinels ([ErrProcessExited] ...) are Violations and
// errors.Is(err, ErrUnknownReply) finds the kind through any *ViolationError in err's
// chain.
type Violation = wire.Violation

// The adapter's violations, the specification's table in its order.
const (
	ProcessExited   = wire.ProcessExited   // The adapter process exited (R52)
	Output          = wire.Output          // The adapter output ended or violated the protocol (R52, R53)
	InvalidResponse = wire.InvalidResponse // The adapter sent an invalid response (R54)
	UnknownReply    = wire.UnknownReply    // The adapter replied to an unknown request (R35, R55)
	InputPipe       = wire.InputPipe       // The adapter input pipe failed or stalled (R45, R56)
	IDExhausted     = wire.IDExhausted     // Adapter request identity space exhausted (R57)
)

// Violation sentinels, one per kind.
var (
	ErrProcessExited   error = ProcessExited
	ErrOutputViolation error = Output
	ErrInvalidResponse error = InvalidResponse
	ErrUnknownReply    error = UnknownReply
	ErrInputPipe       error = InputPipe
	ErrIDExhausted     error = IDExhausted
)

// ViolationError is a protocol violation as the cause of a connection's end: its kind
// and the detail (a *proto.FrameError, a *proto.EnvelopeError, io.EOF, a write error, a
// process's exit status ...). It is wire.ViolationError, the module's one violation
// type; package lifecycle builds ProcessExited ones itself.
type ViolationError = wire.ViolationError

// NewViolation returns a *ViolationError of the given kind and detail.
func NewViolation(kind Violation, err error) *ViolationError {
	return &ViolationError{Kind: kind, Err: err}
}
