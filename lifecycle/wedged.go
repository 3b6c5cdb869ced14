package lifecycle

import (
	"errors"
	"fmt"
	"time"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// WedgedError says that every in-flight slot of an adapter is held by calls whose
// callers gave up (their replies are still awaited: the adapter's handlers ignore
// cancellation), so that it serves no further call. It is the Cause of a call's
// *runtime.CallError that could not get a slot (wrapping the call's own cause,
// context.DeadlineExceeded for a deadline), and the Cause of the end of an adapter a
// [Supervisor] restarted for it (see RestartPolicy.WedgedAfter).
type WedgedError struct {
	// Slots is the number of slots, all held.
	Slots int
	// Since is how long ago the last of those callers gave up.
	Since time.Duration
	// Err is the call's own cause; nil for the cause of a restart.
	Err error
}

func (e *WedgedError) Error() string {
	msg := fmt.Sprintf("all %d slots held by calls whose callers gave up %v ago", e.Slots, e.Since.Round(time.Millisecond))
	if e.Err == nil {
		return "lifecycle: " + msg + "; adapter restarted"
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the call's own cause.
func (e *WedgedError) Unwrap() error { return e.Err }

// wedgedAfter is how long every slot must be held by abandoned calls before the
// adapter is restarted; negative: never.
func (s *Supervisor) wedgedAfter() time.Duration {
	if p := s.policy.WedgedAfter; p != 0 {
		return p
	}
	return bound.Grace(s.cfg.Limits)
}

// abandonedFor returns how many of a's slots are held by calls whose callers gave up,
// whether that is all of them, and how long ago the last of those callers gave up.
func (s *Supervisor) abandonedFor(a *Adapter) (n int, all bool, since time.Duration) {
	n, last := a.conn.Abandoned()
	if n == 0 {
		return 0, false, 0
	}
	return n, n >= bound.InFlight(s.cfg.Limits), time.Since(last)
}

// restartWedged ends a when every one of its slots has been held by abandoned calls for
// longer than the policy allows, and reports whether a is ending (so the caller waits
// for the restart). The end goes the way of any end on its own: the tree is killed and
// verified gone, and the restart loop starts the adapter again.
func (s *Supervisor) restartWedged(a *Adapter) bool {
	after := s.wedgedAfter()
	if after < 0 {
		return false
	}
	n, all, since := s.abandonedFor(a)
	if !all || since < after {
		return false
	}
	if a.wedged.Swap(true) {
		return true // another call is ending it
	}
	we := &WedgedError{Slots: n, Since: since}
	s.cfg.Logger.Warn("every in-flight slot held by calls whose callers gave up; restarting the adapter",
		"adapter", s.name, "slots", n, "since", since.Round(time.Millisecond))
	a.conn.Abort(we)
	return true
}

// slotsHeld returns err, a call's failure on a, saying so when the call could not get
// a slot because every slot is held by calls whose callers gave up.
func (s *Supervisor) slotsHeld(a *Adapter, err error) error {
	var ce *runtime.CallError
	if !errors.As(err, &ce) || !ce.NeverStarted || ce.ID != 0 {
		return err
	}
	switch ce.Code {
	case wire.CodeDeadline, wire.CodeAborted, wire.CodeBusy:
	default:
		return err
	}
	n, all, since := s.abandonedFor(a)
	if !all {
		return err
	}
	e := *ce
	e.Cause = &WedgedError{Slots: n, Since: since, Err: ce.Cause}
	return &e
}

// replied reports whether a call's outcome err means the adapter replied: a result, or
// the adapter's own error reply.
func replied(err error) bool {
	if err == nil {
		return true
	}
	var ce *runtime.CallError
	return errors.As(err, &ce) && ce.Cause == nil && !ce.NeverStarted && !ce.Uncertain
}
