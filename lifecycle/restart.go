package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/bound"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// RestartPolicy says whether and how soon a supervised adapter that ended on its own
// is started again. The zero value never restarts: set MaxRestarts to get restarts.
// Calls made during a restart wait for it (see [Supervisor]); once no restart will
// come, calls fail with [ErrGaveUp], wrapped in an error that says why.
//
// Its backoff fields also govern the start backoff, whatever MaxRestarts says: a start
// fails when Open fails, or when the adapter ends before it served a call (got a reply)
// or ran for ResetAfter. After n failed starts in a row no start is tried for
// Backoff·2^(n-1), capped at MaxBackoff, less up to a fifth at random (defaults: 100 ms,
// 200 ms, 400 ms ... 30 s). Calls meanwhile fail at once with a [*BackoffError] (from
// the second failed start in a row on: the first step is as short as a plain
// restart's delay, and calls wait for it), and so does a new [Supervise] sharing the
// adapter's [Starts] record. A start that succeeds resets the count.
type RestartPolicy struct {
	// MaxRestarts is how many restarts are allowed in total; 0 means none, a negative
	// value means no limit. Restarts of a wedged adapter (see WedgedAfter) are not
	// counted against it.
	MaxRestarts int
	// Backoff is the delay before a restart after a successful start ended, and the
	// start backoff's first step (default 100 ms); MaxBackoff caps the start backoff
	// (default 30 s).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// ResetAfter: a start that ran at least this long succeeded, even if it served no
	// call (default 10 s).
	ResetAfter time.Duration
	// WedgedAfter: when every in-flight slot of the adapter has been held this long by
	// calls whose callers gave up (handlers that ignore cancellation), the adapter is
	// restarted, its tree killed and verified gone, whether or not MaxRestarts allows a
	// restart. 0 means the protocol's disconnect grace (limits.DisconnectGrace, 5 s, or
	// Config.Limits' lower value); a negative value never restarts a wedged adapter.
	WedgedAfter time.Duration
}

func (p RestartPolicy) backoff() time.Duration {
	if p.Backoff > 0 {
		return p.Backoff
	}
	return 100 * time.Millisecond
}

func (p RestartPolicy) maxBackoff() time.Duration {
	if p.MaxBackoff > 0 {
		return p.MaxBackoff
	}
	return 30 * time.Second
}

func (p RestartPolicy) resetAfter() time.Duration {
	if p.ResetAfter > 0 {
		return p.ResetAfter
	}
	return 10 * time.Second
}

// ErrGaveUp is the cause of calls to a supervised adapter that ended and will not be
// restarted. The error wrapping it says why and what to do: the policy allows no
// restarts (set RestartPolicy.MaxRestarts), the restarts are used up, a restart
// failed (its error is wrapped too), or the supervisor was closed.
var ErrGaveUp = errors.New("adapter ended and is not restarted")

// gaveUp returns the final error of a supervisor whose adapter ended and will not be
// restarted, saying why.
func (s *Supervisor) gaveUp(restarts int) error {
	switch max := s.policy.MaxRestarts; {
	case max == 0:
		return fmt.Errorf("%w: the restart policy allows no restarts (set RestartPolicy.MaxRestarts, e.g. registry.Config.Restart, to restart it)", ErrGaveUp)
	case restarts == 1:
		return fmt.Errorf("%w: its one allowed restart is used up (RestartPolicy.MaxRestarts %d)", ErrGaveUp, max)
	default:
		return fmt.Errorf("%w: all %d restarts are used up (RestartPolicy.MaxRestarts %d)", ErrGaveUp, restarts, max)
	}
}

// errSupervisorClosed is the final error after Close (or after the host closed the
// current adapter itself): errors.Is matches ErrGaveUp and runtime.ErrClosed (the
// module's one "closed by the host" sentinel, which runtime.ErrClosed is too).
var errSupervisorClosed = fmt.Errorf("%w: the adapter was %w", ErrGaveUp, runtime.ErrClosed)

// Supervisor keeps one adapter running under a restart policy. A call made while the
// adapter is being restarted waits for the new one within its context: it waits out
// the policy's Backoff and the new adapter's start, and its deadline keeps running
// meanwhile, so a short deadline may pass before the restart is done (the call then
// fails with deadline, never started). While the start backoff holds (the adapter's
// last starts failed, see [RestartPolicy]) a call fails at once instead, with a
// *runtime.CallError (closed, never started) whose Cause is a [*BackoffError]. A call is made
// again on the restarted adapter only when nothing of it had been sent (it found the
// old connection ending); a call that was in flight when the adapter ended fails as
// closed with an uncertain outcome, and the caller decides.
type Supervisor struct {
	cfg    Config
	name   string
	policy RestartPolicy
	onExit func(ExitEvent)
	starts *Starts

	mu        sync.Mutex
	cur       *Adapter
	changed   chan struct{} // closed and replaced whenever cur changes or the end is reached
	restarts  int           // restarts under the policy
	wedged    int           // restarts of a wedged adapter, not counted against MaxRestarts
	final     error         // set when no further adapter will come
	closing   bool
	closeErr  error         // the result of Close, set before closeDone is closed
	closeDone chan struct{} // closed when the first Close has finished
	loopOnce  sync.Once     // starts the loop at the first ending, or (Close) decides it never runs
	loopDone  chan struct{}
	stopCtx   context.Context // cancelled by Close: ends the loop and any restart under way
	stop      context.CancelFunc
}

// Supervise opens the adapter and keeps it running under policy. The first open is
// synchronous: its failure is returned. cfg.OnExit, if set, is called for each ending.
func Supervise(ctx context.Context, cfg Config, policy RestartPolicy) (*Supervisor, error) {
	s := &Supervisor{cfg: cfg, policy: policy, onExit: cfg.OnExit, changed: make(chan struct{}),
		loopDone: make(chan struct{}), closeDone: make(chan struct{})}
	s.stopCtx, s.stop = context.WithCancel(context.Background())
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	exits := make(chan ExitEvent, 1)
	// The host's OnExit runs in the ended adapter's own goroutine, before the loop
	// hears of the end: it may then call Close, which waits for the loop. (Each adapter
	// ends at most once, and the next one starts only after the loop got the event, so
	// calls are not concurrent and the 1-buffered send never blocks.) The loop itself
	// starts at the first ending: an adapter that runs until the host closes it never
	// pays for its goroutine.
	cfg.OnExit = func(ev ExitEvent) {
		if s.onExit != nil {
			s.onExit(ev)
		}
		exits <- ev
		s.loopOnce.Do(func() { go s.run(exits) })
	}
	cfg.obs = newObserved(nameOf(&cfg), &cfg)
	cfg.closed = s.adapterClosed
	s.cfg, s.name, s.starts = cfg, nameOf(&cfg), cfg.Starts
	if s.starts == nil {
		s.starts = new(Starts)
	}
	a, err := s.start(ctx, cfg)
	if err != nil {
		s.stop()
		s.noLoop()
		return nil, err
	}
	s.cur = a
	return s, nil
}

// start opens the adapter unless the start backoff holds, and records the start.
func (s *Supervisor) start(ctx context.Context, cfg Config) (*Adapter, error) {
	gen, err := s.starts.claim(s.policy, s.name)
	if err != nil {
		return nil, &OpenError{Path: cfg.Path, Stage: StageSpawn, Err: err}
	}
	cfg.gen = gen
	a, err := Open(ctx, cfg)
	if err != nil {
		var oe *OpenError
		// A refused configuration, or a host that gave up the start itself, says
		// nothing of the adapter.
		if errors.As(err, &oe) && oe.Stage != StageConfig && !errors.Is(ctx.Err(), context.Canceled) {
			s.starts.failedStart(s.policy, s.cfg.Logger, s.name, err, oe.Stage == StageHandshake, gen)
		} else {
			s.starts.release(errors.As(err, &oe) && oe.Stage == StageHandshake)
		}
		return nil, err
	}
	s.starts.started()
	return a, nil
}

// run is the restart loop's goroutine.
func (s *Supervisor) run(exits chan ExitEvent) {
	failed := s.loop(exits)
	close(s.loopDone)
	// After loopDone: the host's OnExit may call Close, which waits for the loop.
	if failed != nil && s.onExit != nil {
		s.onExit(*failed)
	}
}

// noLoop decides that the loop never starts if it has not started yet: afterwards
// loopDone is closed or the loop is running to its end.
func (s *Supervisor) noLoop() {
	s.loopOnce.Do(func() { close(s.loopDone) })
}

func (s *Supervisor) set(a *Adapter, final error) {
	s.mu.Lock()
	s.cur = a
	if final != nil && s.final == nil {
		s.final = final
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// loop restarts the adapter as the policy allows. It returns the event to report when a
// restart failed, else nil.
func (s *Supervisor) loop(exits chan ExitEvent) *ExitEvent {
	var last ExitEvent
	for {
		select {
		case last = <-exits:
		case <-s.stopCtx.Done():
			return nil
		}
		wedged := last.Adapter.wedged.Load()
		delay := s.policy.backoff()
		switch {
		case wedged:
			// It started well and served until its handlers stopped answering.
		case s.policy.settled(last.Adapter):
			s.starts.succeeded()
		default:
			// Ended during or soon after its start: calls fail at once until the
			// backoff has passed (wait asks the record).
			delay = s.starts.failedStart(s.policy, s.cfg.Logger, s.name, last.Cause, false, last.Adapter.cfg.gen)
		}
		s.mu.Lock()
		restarts := s.restarts
		allowed := wedged || s.policy.MaxRestarts < 0 || restarts < s.policy.MaxRestarts
		s.mu.Unlock()
		if !allowed {
			final := s.gaveUp(restarts)
			if s.policy.MaxRestarts != 0 {
				s.cfg.Logger.Warn("adapter ended and its restarts are used up; not restarting it", "restarts", restarts)
			}
			s.set(nil, final)
			return nil
		}
		s.set(nil, nil)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.stopCtx.Done():
			t.Stop()
			s.set(nil, errSupervisorClosed)
			return nil
		}
		ctx, cancel := context.WithTimeout(s.stopCtx, bound.Call(s.cfg.Limits))
		cfg := s.cfg
		s.mu.Lock()
		cfg.restarts = s.restarts + s.wedged + 1
		s.mu.Unlock()
		a, err := s.start(ctx, cfg)
		cancel()
		s.mu.Lock()
		if wedged {
			s.wedged++
		} else {
			s.restarts++
		}
		n := s.restarts + s.wedged
		s.mu.Unlock()
		s.cfg.obs.restart(cfg.restarts, err)
		if err != nil {
			s.cfg.Logger.Warn("restart failed; not restarting it again", "restart", n, "error", err)
			final := fmt.Errorf("%w: restart %d failed: %w", ErrGaveUp, n, err)
			s.set(nil, final)
			if s.stopCtx.Err() != nil {
				return nil // closed while restarting: the host knows
			}
			return &ExitEvent{Adapter: last.Adapter, Cause: last.Cause, Restart: final}
		}
		s.set(a, nil)
	}
}

// adapterClosed runs when the host closed a supervised adapter itself (Adapter.Close on
// what Current returned): if it is the current one, the supervisor ends as if closed
// instead of waiting for an exit event that never comes.
func (s *Supervisor) adapterClosed(a *Adapter) {
	s.mu.Lock()
	mine := s.cur == a && !s.closing
	s.mu.Unlock()
	if mine {
		s.stop()
		s.set(nil, errSupervisorClosed)
	}
}

// Current returns the running adapter, or nil while it is being restarted or after
// the supervisor gave up. It is for inspection (Pid, Mechanism, InFlight ...): calls go
// through [Supervisor.Call], which handles restarts; closing it ends the supervisor.
func (s *Supervisor) Current() *Adapter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// restartCount returns how many restarts were attempted (Stats().Restarts).
func (s *Supervisor) restartCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts + s.wedged
}

// wait returns the current adapter, waiting within ctx while a restart is under way.
func (s *Supervisor) wait(ctx context.Context) (*Adapter, error) {
	for {
		s.mu.Lock()
		a, final, changed := s.cur, s.final, s.changed
		s.mu.Unlock()
		switch {
		case final != nil:
			return nil, final
		case a != nil && a.Err() == nil:
			return a, nil
		}
		// A restart waiting out the start backoff after a second failed start in a
		// row or more: fail at once (the first step is as short as a plain restart's
		// delay, and calls wait for it).
		if err := s.starts.check(s.name, 2); err != nil {
			return nil, err
		}
		// No adapter, or one whose connection ended: the loop will replace it.
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Call calls a method of the current adapter, waiting within ctx for a restart under
// way. A call that cannot reach any adapter fails with a *runtime.CallError with code
// closed (or the context's code) that is never started.
func (s *Supervisor) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.Do(ctx, &handover.Request{Method: method, Params: params})
}

// Do makes the call req describes as [Supervisor.Call] does, handing req to the
// connection (see [runtime.Conn.Do]): the module's typed client calls through
// it; req must not be nil.
func (s *Supervisor) Do(ctx context.Context, req *handover.Request) (json.RawMessage, error) {
	method := req.Method
	if ctx == nil {
		return nil, &runtime.CallError{Method: method, Code: wire.CodeInvalid, Message: "nil context", NeverStarted: true, Cause: runtime.ErrNilContext}
	}
	t := s.cfg.obs.begin(method, req.Params)
	res, err := s.call(ctx, req)
	s.cfg.obs.end(ctx, t, method, res, err)
	return res, err
}

func (s *Supervisor) call(ctx context.Context, req *handover.Request) (json.RawMessage, error) {
	method := req.Method
	for {
		a, err := s.wait(ctx)
		if err != nil {
			var be *BackoffError
			switch {
			case errors.As(err, &be):
				return nil, &runtime.CallError{Method: method, Code: wire.CodeClosed, Message: be.summary(), NeverStarted: true, Cause: err}
			case ctx.Err() != nil:
				return nil, runtime.ContextError(ctx, method)
			}
			return nil, &runtime.CallError{Method: method, Code: wire.CodeClosed, NeverStarted: true, Cause: err}
		}
		if s.restartWedged(a) {
			continue // wait for the restarted adapter
		}
		res, err := a.conn.Do(ctx, req)
		if replied(err) {
			s.starts.served(a)
		}
		// A call that found the adapter ending before anything was sent is safe to
		// make again, on the restarted adapter; anything sent is the caller's to decide.
		if err != nil && a.Err() != nil && runtime.IsNeverStarted(err) && runtime.CodeOf(err) == wire.CodeClosed {
			continue
		}
		if err != nil {
			err = s.slotsHeld(a, err)
		}
		return res, err
	}
}

// Close stops restarting and closes the current adapter verified (see [Adapter.Close]).
// It may be called more than once, also concurrently: every call returns once the
// first has finished, with its result.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.closeDone
		return s.closeErr
	}
	s.closing = true
	s.mu.Unlock()
	defer close(s.closeDone)
	s.stop()
	s.noLoop()
	<-s.loopDone
	s.mu.Lock()
	a := s.cur
	s.mu.Unlock()
	s.set(nil, errSupervisorClosed)
	if a != nil {
		s.closeErr = a.Close()
	}
	return s.closeErr
}
