package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// BackoffError is the error of a start that was not tried because the adapter's last
// starts failed (see [RestartPolicy] for the schedule): a call to a supervised adapter
// that is backing off fails at once with it (as the Cause of a *runtime.CallError that
// is never started), and so does a new [Supervise] of an adapter whose [Starts] record
// is backing off (as the Err of an *OpenError at StageSpawn). Cause is the last
// failure, and errors.Is/As see through to it.
type BackoffError struct {
	Name string
	// Failures counts the consecutive failed starts.
	Failures int
	// Retry is how long until the next start may be tried.
	Retry time.Duration
	// Cause is why the last start failed: an *OpenError, or the cause of an end soon
	// after the start (a *wire.ViolationError).
	Cause error
}

func (e *BackoffError) Error() string {
	msg := "lifecycle: " + e.Name + ": " + e.summary()
	if e.Cause != nil {
		msg += ": last failure: " + e.Cause.Error()
	}
	return msg
}

// summary says what the error says, without the name and the cause.
func (e *BackoffError) summary() string {
	return fmt.Sprintf("not started: restarting after %d failure(s), next try in %v", e.Failures, e.Retry.Round(time.Millisecond))
}

// Unwrap returns the last failure.
func (e *BackoffError) Unwrap() error { return e.Cause }

// Starts is the record of an adapter's starts from which its start backoff is decided:
// how many starts failed in a row, when the next may be tried, and why the last
// failed. A start fails when Open fails, or when the adapter ends before it served a
// call or ran for RestartPolicy.ResetAfter. A [Supervisor] keeps one; a host that
// supervises the same adapter again after a supervisor gave up (package registry does,
// one record per executable) passes one record in Config.Starts to each, so that the
// backoff holds across them.
//
// The zero value is ready to use; a Starts must not be copied after first use.
type Starts struct {
	mu       sync.Mutex
	starts   uint64    // processes started
	failed   uint64    // starts that failed, in total
	failures int       // consecutive failed starts
	retryAt  time.Time // no start before; zero when none failed
	cause    error     // the last failure
	refused  uint64    // calls and starts refused since the last failure was logged
	// gen changes with every step of the backoff and every reset: a start tried in an
	// earlier generation that fails (one of several tried at once) is counted, but does
	// not step the backoff again.
	gen uint64
}

// delay is the backoff after failures consecutive failed starts: Backoff doubled for
// each failure after the first, capped at MaxBackoff, less up to a fifth at random so
// that adapters that failed together do not start together again.
func (p RestartPolicy) delay(failures int) time.Duration {
	d, limit := p.backoff(), p.maxBackoff()
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - rand.N(d/5+1)
}

// check returns a *BackoffError while the record is backing off after at least
// minFailures failed starts in a row, else nil.
func (r *Starts) check(name string, minFailures int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refuse(name, minFailures)
}

// refuse is check under r.mu.
func (r *Starts) refuse(name string, minFailures int) error {
	if r.failures == 0 || r.failures < minFailures {
		return nil
	}
	wait := time.Until(r.retryAt)
	if wait <= 0 {
		return nil
	}
	r.refused++
	return &BackoffError{Name: name, Failures: r.failures, Retry: wait, Cause: r.cause}
}

// claim returns a *BackoffError while the record is backing off; otherwise the caller
// may start the adapter, and after failed starts it alone: the others are refused as
// if the start it tries had failed again, until started or failedStart tells how it went.
// It returns the generation the start is tried in, for failedStart.
func (r *Starts) claim(p RestartPolicy, name string) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.refuse(name, 1); err != nil {
		return 0, err
	}
	if r.failures > 0 {
		r.retryAt = time.Now().Add(p.delay(r.failures + 1))
	}
	return r.gen, nil
}

// release gives up a claim whose start said nothing of the adapter (its configuration
// was refused, or the host gave it up): others may try at once. spawned counts the
// process the start had begun, if any.
func (r *Starts) release(spawned bool) {
	r.mu.Lock()
	if spawned {
		r.starts++
	}
	r.retryAt = time.Time{}
	r.mu.Unlock()
}

// started records a start whose handshake succeeded: other starts may be tried (the
// failures are forgotten once it has served a call or run for ResetAfter).
func (r *Starts) started() {
	r.mu.Lock()
	r.starts++
	r.retryAt = time.Time{}
	r.mu.Unlock()
}

// failedStart records a failed start tried in generation gen (spawned is false when
// no process was started) and returns the backoff before the next one. It logs one
// warning per step, with the calls refused during the backoff before it: a crash loop
// logs once per backoff step, not once per call.
func (r *Starts) failedStart(p RestartPolicy, log hclog.Logger, name string, cause error, spawned bool, gen uint64) time.Duration {
	r.mu.Lock()
	if spawned {
		r.starts++
	}
	r.failed++
	if gen != r.gen && r.failures > 0 {
		// Tried alongside a start whose failure stepped the backoff already.
		d := max(0, time.Until(r.retryAt))
		r.mu.Unlock()
		return d
	}
	r.gen++
	r.failures++
	n, refused := r.failures, r.refused
	d := p.delay(n)
	r.retryAt, r.cause, r.refused = time.Now().Add(d), cause, 0
	r.mu.Unlock()
	args := []any{"adapter", name, "failures", n, "next_try", d.Round(time.Millisecond), "error", cause}
	if refused > 0 {
		args = append(args, "refused_meanwhile", refused)
	}
	log.Warn("adapter start failed; backing off", args...)
	return d
}

// succeeded resets the record: a start served a call or ran long enough.
func (r *Starts) succeeded() {
	r.mu.Lock()
	if r.failures > 0 {
		r.gen++
	}
	r.failures, r.retryAt, r.cause, r.refused = 0, time.Time{}, nil, 0
	r.mu.Unlock()
}

// served records that a served a call: its start succeeded.
func (r *Starts) served(a *Adapter) {
	if a.served.Load() {
		return
	}
	a.served.Store(true)
	r.succeeded()
}

// settled reports whether a's start counts as a success: it served a call or has run
// for the policy's ResetAfter.
func (p RestartPolicy) settled(a *Adapter) bool {
	return a.served.Load() || time.Since(a.startedAt) >= p.resetAfter()
}

// BackoffStats is the state of an adapter's start backoff (see [Starts]).
type BackoffStats struct {
	// Starts counts the processes started; Failed the starts that failed.
	Starts, Failed uint64
	// Failures counts the consecutive failed starts (0: the last start succeeded or
	// none failed).
	Failures int
	// RetryAt is when the next start may be tried; zero unless backing off.
	RetryAt time.Time
	// LastError is why the last start failed, nil when Failures is 0.
	LastError error
}

// Stats returns the record's state. A nil *Starts has the zero state.
func (r *Starts) Stats() BackoffStats {
	if r == nil {
		return BackoffStats{}
	}
	return r.snapshot(RestartPolicy{}, nil)
}

// snapshot returns the record's state; cur, the running adapter or nil, resets it
// when its start has settled.
func (r *Starts) snapshot(p RestartPolicy, cur *Adapter) BackoffStats {
	if cur != nil && !cur.startedAt.IsZero() && cur.Err() == nil && p.settled(cur) {
		r.served(cur)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := BackoffStats{Starts: r.starts, Failed: r.failed, Failures: r.failures, LastError: r.cause}
	if r.failures > 0 && time.Now().Before(r.retryAt) {
		st.RetryAt = r.retryAt
	}
	return st
}
