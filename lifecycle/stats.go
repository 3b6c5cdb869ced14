package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/stderrlog"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// Observer is a host's hook into what its adapters do, to feed its own metrics or
// tracing system, in the manner of net/http/httptrace: every field is optional, a nil
// *Observer observes nothing, and the functions are called synchronously at
// well-defined points, so they must return quickly and must not block (hand the event
// to a channel with a default case, or update atomics). The call hooks run in the
// caller's goroutine; the process hooks in the adapter's supervising goroutine.
type Observer struct {
	// CallStart is called when a call begins, before it waits for an adapter or a slot.
	CallStart func(CallStartInfo)
	// CallEnd is called when a call returns to its caller.
	CallEnd func(CallEndInfo)
	// ProcessStart is called when an adapter process has started (before its handshake).
	ProcessStart func(ProcessInfo)
	// ProcessExit is called when an adapter process has ended and its cleanup was
	// decided, whether the host closed it or it ended on its own.
	ProcessExit func(ExitInfo)
	// Restart is called after each restart attempt of a supervised adapter.
	Restart func(RestartInfo)
	// LimitHit is called when the kernel stopped an adapter's tree at a limit of
	// Config.Resources (see platform.Tree.LimitHit).
	LimitHit func(LimitInfo)
}

// CallStartInfo describes a call that begins.
type CallStartInfo struct {
	Adapter  string // the adapter's name
	Method   string
	BytesOut int // the params' size in bytes (JSON, without framing)
}

// CallEndInfo describes a call that returned.
type CallEndInfo struct {
	Adapter  string
	Method   string
	Code     wire.Code // "" for a success
	Err      error     // nil for a success, else the call's error
	Duration time.Duration
	BytesOut int // params sent
	BytesIn  int // the result's size in bytes (0 for an error)
	// Uncertain: the request was sent and no reply came (runtime.IsUncertain).
	Uncertain bool
}

// ProcessInfo describes an adapter process that started.
type ProcessInfo struct {
	Adapter  string
	Path     string
	Pid      int
	Restarts int // restarts before this start (0 for the first)
}

// ExitInfo describes how an adapter process ended.
type ExitInfo struct {
	Adapter string
	Pid     int
	Time    time.Time
	// Status is the exit status as the OS reports it ("exit status 1", "signal:
	// killed"), "" when it is not known.
	Status string
	// Cause is why the connection ended (nil when the host closed it cleanly): a
	// *wire.ViolationError for an exit or a protocol violation.
	Cause error
	// HostClosed: the host closed the adapter (Close), it did not end on its own.
	HostClosed bool
	// Cleanup is nil when the tree was proven gone.
	Cleanup error
}

// RestartInfo describes a restart attempt.
type RestartInfo struct {
	Adapter string
	Attempt int   // 1 for the first restart
	Err     error // nil when the restarted adapter is running
}

// LimitInfo describes a tree stopped at a resource limit.
type LimitInfo struct {
	Adapter string
	Pid     int
	Err     error // wraps platform.ErrMemoryLimit
}

// Stats is a snapshot of what the host knows of one adapter: its calls by method,
// its exits, and the resources of its current process tree.
type Stats struct {
	Name string
	// Pid is the running adapter process's id, 0 when none runs.
	Pid int
	// Restarts counts restart attempts (supervised adapters).
	Restarts int
	// Violations counts connections ended by a protocol violation of the adapter.
	Violations uint64
	// LimitHits counts trees stopped at a resource limit.
	LimitHits uint64
	// LastExit is the last end of an adapter process, nil when none has ended yet.
	LastExit *ExitInfo
	// InFlight is the number of calls under way.
	InFlight int64
	// Abandoned is the number of the running adapter's in-flight slots held by calls
	// whose callers gave up (a cancel or deadline; the reply is still awaited): when
	// it reaches the in-flight bound, no call gets a slot (see [WedgedError]).
	Abandoned int
	// Backoff is the state of the start backoff (supervised adapters; see [Starts]).
	Backoff BackoffStats
	// Methods are the per-method figures, sorted by method. Calls to methods beyond
	// the first 256 distinct names are counted under "(other)".
	Methods []MethodStats
	// Usage is the resource use of the running process tree, as far as the platform
	// can say (zero when none runs).
	Usage platform.Usage
	// LogTail is the last lines of the adapter's standard error (sanitized), when the
	// host keeps them (Config.LogTail), oldest first.
	LogTail []string
	// DroppedLogLines counts standard error lines not logged because the host's logger
	// did not keep up.
	DroppedLogLines uint64
}

// MethodStats are the figures of one method.
type MethodStats struct {
	Method string
	// Calls counts the calls that returned (successes and errors).
	Calls uint64
	// Errors counts the calls that failed, by code.
	Errors map[wire.Code]uint64
	// CallerErrors counts the failures of Errors that were the caller's doing, not the
	// adapter's, by code (each at most its Errors count): a method the adapter does not
	// advertise (runtime.ErrUnknownMethod, unavailable), params or a context refused
	// before anything was sent (invalid), and the caller's own context ending: its
	// deadline (deadline) or its cancellation (aborted). A context a host bounded with
	// the protocol's deadline on the caller's behalf (cause runtime.ErrCallDeadline),
	// and the call deadline the runtime applies when the context has none, are the
	// adapter's: its calls took too long.
	CallerErrors map[wire.Code]uint64
	// Uncertain counts failed calls whose outcome is uncertain (sent, no reply).
	Uncertain uint64
	// InFlight is the number of calls under way.
	InFlight int64
	// BytesOut and BytesIn total the params sent and the results received (JSON
	// bytes, without framing).
	BytesOut, BytesIn uint64
	// P50 and P99 are latency quantiles from a fixed-size histogram (within 12.5%).
	P50, P99 time.Duration
	// Latency is the histogram P50 and P99 are read from, with the calls' total
	// duration: enough to export the figures as a Prometheus histogram.
	Latency Latency
}

// maxMethods bounds the distinct method names counted per adapter: a method name
// comes from the host's callers, who may be remote.
const maxMethods = 256

// otherMethod collects the calls of methods beyond maxMethods.
const otherMethod = "(other)"

type methodStats struct {
	inFlight atomic.Int64
	// ok counts successes; Calls is ok plus the errors, so that every figure a
	// snapshot derives (successes = Calls - errors) only ever grows between snapshots,
	// as Prometheus counters must.
	ok        atomic.Uint64
	errs      [len(proto.Codes)]atomic.Uint64
	callerErr [len(proto.Codes)]atomic.Uint64 // the errs that were the caller's doing
	uncertain atomic.Uint64
	bytesOut  atomic.Uint64
	bytesIn   atomic.Uint64
	lat       histogram
}

// observed is what the host keeps of one adapter across its restarts: call figures,
// exits, the stderr tail, and the host's Observer.
type observed struct {
	name     string
	observer *Observer

	methods  atomic.Pointer[map[string]*methodStats] // copied on insert
	insertMu sync.Mutex

	violations   atomic.Uint64
	limitHits    atomic.Uint64
	droppedLines atomic.Uint64
	tail         *stderrlog.Tail // nil unless Config.LogTail > 0

	mu       sync.Mutex
	lastExit *ExitInfo
}

func newObserved(name string, cfg *Config) *observed {
	o := &observed{name: name, observer: cfg.Observer}
	if cfg.LogTail > 0 {
		o.tail = stderrlog.NewTail(cfg.LogTail)
	}
	m := make(map[string]*methodStats)
	o.methods.Store(&m)
	return o
}

// method returns the figures of a method, creating them on first use.
func (o *observed) method(name string) *methodStats {
	if ms := (*o.methods.Load())[name]; ms != nil {
		return ms
	}
	o.insertMu.Lock()
	defer o.insertMu.Unlock()
	cur := *o.methods.Load()
	if ms := cur[name]; ms != nil {
		return ms
	}
	if len(cur) >= maxMethods {
		name = otherMethod
		if ms := cur[name]; ms != nil {
			return ms
		}
	}
	next := make(map[string]*methodStats, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	ms := new(methodStats)
	next[name] = ms
	o.methods.Store(&next)
	return ms
}

// callToken is what begin hands to end.
type callToken struct {
	ms    *methodStats
	start time.Time
	out   int
}

func (o *observed) begin(method string, params json.RawMessage) callToken {
	ms := o.method(method)
	ms.inFlight.Add(1)
	if ob := o.observer; ob != nil && ob.CallStart != nil {
		ob.CallStart(CallStartInfo{Adapter: o.name, Method: method, BytesOut: len(params)})
	}
	return callToken{ms: ms, start: time.Now(), out: len(params)}
}

func (o *observed) end(ctx context.Context, t callToken, method string, res json.RawMessage, err error) {
	d := time.Since(t.start)
	ms := t.ms
	ms.inFlight.Add(-1)
	ms.bytesOut.Add(uint64(t.out))
	ms.lat.observe(d)
	var code wire.Code
	uncertain := false
	if err != nil {
		code = wire.CodeFailed
		var ce *runtime.CallError
		if errors.As(err, &ce) {
			code = ce.Code
		}
		ms.errs[codeIndex(code)].Add(1)
		if callerCaused(ctx, code, err) {
			ms.callerErr[codeIndex(code)].Add(1) // after errs: a snapshot never sees more
		}
		if uncertain = runtime.IsUncertain(err); uncertain {
			ms.uncertain.Add(1)
		}
	} else {
		ms.ok.Add(1)
		ms.bytesIn.Add(uint64(len(res)))
	}
	if ob := o.observer; ob != nil && ob.CallEnd != nil {
		ob.CallEnd(CallEndInfo{Adapter: o.name, Method: method, Code: code, Err: err, Duration: d,
			BytesOut: t.out, BytesIn: len(res), Uncertain: uncertain})
	}
}

// callerCaused reports whether a call's failure err (of code) was its caller's
// doing (see MethodStats.CallerErrors); ctx is the call's context.
func callerCaused(ctx context.Context, code wire.Code, err error) bool {
	switch {
	case errors.Is(err, runtime.ErrUnknownMethod), errors.Is(err, runtime.ErrInvalidParams),
		errors.Is(err, runtime.ErrRequestTooLarge), errors.Is(err, runtime.ErrNilContext):
		return true
	case code != wire.CodeDeadline && code != wire.CodeAborted:
		return false
	}
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), runtime.ErrCallDeadline)
}

func codeIndex(c wire.Code) int {
	for i, k := range proto.Codes {
		if k == c {
			return i
		}
	}
	return codeIndex(wire.CodeFailed)
}

func (o *observed) processStart(a *Adapter, restarts int) {
	if ob := o.observer; ob != nil && ob.ProcessStart != nil {
		ob.ProcessStart(ProcessInfo{Adapter: o.name, Path: a.cfg.Path, Pid: a.tree.Pid(), Restarts: restarts})
	}
}

// processExit records how an adapter process ended.
func (o *observed) processExit(a *Adapter, hostClosed bool) {
	ex := &ExitInfo{Adapter: o.name, Pid: a.tree.Pid(), Time: time.Now(), HostClosed: hostClosed, Cleanup: a.cleanupErr}
	if st := a.tree.ExitState(); st != nil {
		ex.Status = st.String()
	}
	cause := a.conn.Err()
	if !errors.Is(cause, runtime.ErrClosed) {
		ex.Cause = cause
	}
	var ve *wire.ViolationError
	if errors.As(cause, &ve) && ve.Kind != wire.ProcessExited {
		o.violations.Add(1)
	}
	o.mu.Lock()
	o.lastExit = ex
	o.mu.Unlock()
	if lerr := a.tree.LimitHit(); lerr != nil {
		o.limitHits.Add(1)
		if ob := o.observer; ob != nil && ob.LimitHit != nil {
			ob.LimitHit(LimitInfo{Adapter: o.name, Pid: ex.Pid, Err: lerr})
		}
	}
	if ob := o.observer; ob != nil && ob.ProcessExit != nil {
		ob.ProcessExit(*ex)
	}
}

func (o *observed) restart(attempt int, err error) {
	if ob := o.observer; ob != nil && ob.Restart != nil {
		ob.Restart(RestartInfo{Adapter: o.name, Attempt: attempt, Err: err})
	}
}

// stats returns the snapshot; cur is the running adapter or nil.
func (o *observed) stats(cur *Adapter, restarts int) Stats {
	st := Stats{Name: o.name, Restarts: restarts, Violations: o.violations.Load(),
		LimitHits: o.limitHits.Load(), DroppedLogLines: o.droppedLines.Load(), LogTail: o.tail.Lines()}
	o.mu.Lock()
	if o.lastExit != nil {
		ex := *o.lastExit
		st.LastExit = &ex
	}
	o.mu.Unlock()
	if cur != nil {
		select {
		case <-cur.done:
		default:
			st.Pid = cur.tree.Pid()
			st.Usage = cur.tree.Usage()
			st.Abandoned, _ = cur.conn.Abandoned()
		}
	}
	methods := *o.methods.Load()
	st.Methods = make([]MethodStats, 0, len(methods))
	for name, ms := range methods {
		m := MethodStats{Method: name, Calls: ms.ok.Load(), Uncertain: ms.uncertain.Load(),
			InFlight: ms.inFlight.Load(), BytesOut: ms.bytesOut.Load(), BytesIn: ms.bytesIn.Load(),
			Latency: ms.lat.snapshot()}
		m.P50, m.P99 = m.Latency.quantile(0.50), m.Latency.quantile(0.99)
		for i, c := range proto.Codes {
			// Loaded before errs, which end counts first: never more than Errors.
			if n := ms.callerErr[i].Load(); n > 0 {
				if m.CallerErrors == nil {
					m.CallerErrors = make(map[wire.Code]uint64)
				}
				m.CallerErrors[c] = n
			}
			if n := ms.errs[i].Load(); n > 0 {
				if m.Errors == nil {
					m.Errors = make(map[wire.Code]uint64)
				}
				m.Errors[c] = n
				m.Calls += n
			}
		}
		st.InFlight += m.InFlight
		st.Methods = append(st.Methods, m)
	}
	sort.Slice(st.Methods, func(i, j int) bool { return st.Methods[i].Method < st.Methods[j].Method })
	return st
}
