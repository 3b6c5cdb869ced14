//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// soakEnv overrides the number of calls of TestSoak (make soak sets 200,000).
const soakEnv = "ADAPTERKIT_SOAK_CALLS"

const (
	soakAdapters = 8
	soakCallers  = 64
	soakDefault  = 5000
)

// The kinds of call the soak mixes, and what each must end with.
const (
	kindEcho     = iota // a result equal to the params, which carry a unique token
	kindFail            // an error denied whose message is the call's token
	kindCancel          // cancelled by the caller: aborted
	kindDeadline        // its deadline expires: deadline
	kindCrash           // the adapter exits mid-call: closed, uncertain, process exited
	numKinds
)

var kindNames = [numKinds]string{"echo", "fail", "cancel", "deadline", "crash"}

// soakTally counts how the calls ended.
type soakTally struct {
	mu         sync.Mutex
	outcomes   map[string]int // by kind/outcome
	unexpected []string       // calls that did not end as their kind allows
}

func (s *soakTally) add(kind int, outcome string) {
	s.mu.Lock()
	s.outcomes[kindNames[kind]+"/"+outcome]++
	s.mu.Unlock()
}

func (s *soakTally) bad(i int, kind int, msg string) {
	s.mu.Lock()
	if len(s.unexpected) < 20 {
		s.unexpected = append(s.unexpected, fmt.Sprintf("call %d (%s): %s", i, kindNames[kind], msg))
	}
	s.outcomes["UNEXPECTED"]++
	s.mu.Unlock()
}

func soakCalls(t *testing.T) int {
	n := soakDefault
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q is not a positive number", soakEnv, v)
		}
	}
	return n
}

// Load and faults together: 8 adapters under a restart policy, 64 callers, calls mixing
// successes, errors, cancels, expiring deadlines and adapter crashes. Every call ends
// exactly once with a result or typed error its kind allows; every reply reaches its own
// caller (each call carries a unique token that must come back); the adapters saw no
// host violation (the rogue exits with 4 or 5 on a reused id or a cancel for an unsent
// id, R33 R36); and at the end no process, goroutine or descriptor remains.
func TestSoak(t *testing.T) {
	calls := soakCalls(t)
	rogue := buildBinT(t, "rogue")
	buildBinT(t, "examples/echo") // other tests' builds must not count as leaks
	warmUp(t, rogue)
	fdsBefore := fdTable(t)

	var exitsMu sync.Mutex
	var exits []lifecycle.ExitEvent
	exitLog := filepath.Join(t.TempDir(), "exits")
	reg := registry.New(&registry.Config{
		Env:     rogueEnv("serve", "ROGUE_EXITLOG="+exitLog),
		Limits:  rogueLimits(),
		Restart: lifecycle.RestartPolicy{MaxRestarts: -1, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, ResetAfter: 50 * time.Millisecond},
		OnExit: func(ev lifecycle.ExitEvent) {
			exitsMu.Lock()
			exits = append(exits, ev)
			exitsMu.Unlock()
		},
	})
	handles := make([]*registry.Handle, soakAdapters)
	for i := range handles {
		h, err := reg.Open(stepCtx(t), rogue, nil)
		if err != nil {
			t.Fatal(err)
		}
		handles[i] = h
	}

	crashEvery := max(calls/max(4, calls/2000), 1)
	tally := &soakTally{outcomes: map[string]int{}}
	var next, ended atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < soakCallers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 0x50a4))
			for {
				i := int(next.Add(1) - 1)
				if i >= calls {
					return
				}
				kind := pickKind(rng, i, crashEvery)
				soakCall(handles[rng.IntN(soakAdapters)], rng, i, kind, tally)
				ended.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		t.Fatalf("calls never ended: %d of %d ended", ended.Load(), calls)
	}
	elapsed := time.Since(start)

	restarts := 0
	for _, h := range handles {
		restarts += h.Stats().Restarts
	}
	if err := reg.Close(stepCtx(t)); err != nil {
		t.Fatalf("registry close not verified: %v", err)
	}

	keys := make([]string, 0, len(tally.outcomes))
	for k := range tally.outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var summary strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&summary, "\n  %-28s %8d", k, tally.outcomes[k])
	}
	t.Logf("soak: %d calls, %d adapters, %d callers, %v, %.0f calls/s, %d crashes seen, %d restarts; outcomes:%s",
		calls, soakAdapters, soakCallers, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds(),
		len(exits), restarts, summary.String())

	if len(tally.unexpected) > 0 {
		t.Fatalf("%d calls ended unexpectedly, e.g.:\n%s", tally.outcomes["UNEXPECTED"], strings.Join(tally.unexpected, "\n"))
	}
	exitsMu.Lock()
	defer exitsMu.Unlock()
	if len(exits) == 0 || len(exits) != restarts {
		t.Fatalf("%d adapter exits, %d restarts: want every crash restarted", len(exits), restarts)
	}
	for _, ev := range exits {
		var xe *lifecycle.ExitError
		crash := errors.As(ev.Cause, &xe) && xe.State != nil && xe.State.ExitCode() == 2
		if (!crash && crashCause(&runtime.CallError{Code: "closed", Cause: ev.Cause}) != "epipe") || ev.Cleanup != nil {
			t.Fatalf("adapter exit %v (cleanup %v): want only the crashes (status 2), verified", ev.Cause, ev.Cleanup)
		}
	}
	// An exit the host saw as EPIPE carries no status: the adapters' own log says how
	// each ended. Every exit the host reported must be a crash (status 2) — a rogue
	// that detected a host violation exits 4 or 5 (R33, R36) — and the rest ended at
	// stdin EOF when the registry closed them (status 0).
	codes := readExitLog(t, exitLog)
	other := false
	for code := range codes {
		other = other || (code != 0 && code != 2)
	}
	if codes[2] != len(exits) || other {
		t.Fatalf("adapter exit statuses %v (status: count); want %d crashes (2) and stdin-EOF exits (0) only", codes, len(exits))
	}

	if left := procsRunning(rogue); len(left) > 0 {
		t.Fatalf("adapter processes left: %v", left)
	}
	goleak.VerifyNone(t)
	for fd, target := range fdTable(t) {
		if fdsBefore[fd] != target {
			t.Errorf("descriptor left open: %d -> %s", fd, target)
		}
	}
}

// warmUp opens and closes one adapter, so that descriptors the Go runtime creates once
// (its poller) exist before the soak's baseline is taken.
func warmUp(t *testing.T, path string) {
	t.Helper()
	a, err := lifecycle.Open(stepCtx(t), lifecycle.Config{Path: path, Env: rogueEnv("serve")})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// pickKind chooses a call's kind: a crash every crashEvery calls, else 50% echo, 20%
// fail, 15% cancel, 15% deadline.
func pickKind(rng *rand.Rand, i, crashEvery int) int {
	if i%crashEvery == crashEvery/2 {
		return kindCrash
	}
	switch r := rng.IntN(100); {
	case r < 50:
		return kindEcho
	case r < 70:
		return kindFail
	case r < 85:
		return kindCancel
	default:
		return kindDeadline
	}
}

// soakCall makes call i of the given kind and records how it ended.
func soakCall(h *registry.Handle, rng *rand.Rand, i, kind int, tally *soakTally) {
	token := "t" + strconv.Itoa(i)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var value json.RawMessage
	var err error
	switch kind {
	case kindEcho:
		params := `{"token":"` + token + `"}`
		value, err = h.Call(ctx, "rogue.test.echo", json.RawMessage(params))
		if err == nil {
			if string(value) != params {
				tally.bad(i, kind, "reply for another call: "+string(value))
				return
			}
			tally.add(kind, "result")
			return
		}
	case kindFail:
		value, err = h.Call(ctx, "rogue.test.fail", json.RawMessage(`{"code":"denied","message":"`+token+`"}`))
		var ce *runtime.CallError
		if errors.As(err, &ce) && ce.Code == "denied" {
			if ce.Message != token || ce.Uncertain || ce.NeverStarted {
				tally.bad(i, kind, "error for another call or misjudged: "+err.Error())
				return
			}
			tally.add(kind, "denied")
			return
		}
	case kindCancel:
		cctx, ccancel := context.WithCancel(ctx)
		stop := time.AfterFunc(time.Duration(rng.IntN(500))*time.Microsecond, ccancel)
		value, err = h.Call(cctx, "rogue.test.sleep", json.RawMessage(`{"ms":10000,"token":"`+token+`"}`))
		stop.Stop()
		ccancel()
		if runtime.CodeOf(err) == wire.CodeAborted && errors.Is(err, context.Canceled) {
			tally.add(kind, "aborted/"+started(err))
			return
		}
	case kindDeadline:
		dctx, dcancel := context.WithTimeout(ctx, time.Duration(1+rng.IntN(3))*time.Millisecond)
		value, err = h.Call(dctx, "rogue.test.sleep", json.RawMessage(`{"ms":10000,"token":"`+token+`"}`))
		dcancel()
		if runtime.CodeOf(err) == wire.CodeDeadline && errors.Is(err, context.DeadlineExceeded) {
			tally.add(kind, "deadline/"+started(err))
			return
		}
	case kindCrash:
		value, err = h.Call(ctx, "rogue.test.crash", nil)
	}
	// Any kind may end because an adapter crashed under it (its own crash call or
	// another caller's): closed, with the crash as the cause.
	if how := crashCause(err); how != "" {
		tally.add(kind, "closed-by-crash("+how+")/"+started(err))
		return
	}
	tally.bad(i, kind, fmt.Sprintf("value %s, error %v", value, err))
}

// crashCause names how a call that ended because its adapter crashed reports the
// crash, or returns "" when err is not such an end. The process exit is the cause when
// the read side notices first; when the host was writing to the adapter as it died, the
// write fails with EPIPE first, and the first cause wins: "The adapter input pipe failed"
// (R56 covers failed writes too). Both end the connection the same way; the soak counts
// them apart.
func crashCause(err error) string {
	switch {
	case runtime.CodeOf(err) != wire.CodeClosed:
		return ""
	case errors.Is(err, wire.ProcessExited):
		return "exit"
	case errors.Is(err, wire.InputPipe) && errors.Is(err, syscall.EPIPE):
		return "epipe"
	}
	return ""
}

// started names what the host says about whether the call reached the adapter.
func started(err error) string {
	switch {
	case runtime.IsNeverStarted(err):
		return "never-started"
	case runtime.IsUncertain(err):
		return "uncertain"
	}
	return "certain"
}

// readExitLog counts the exit statuses the rogues logged (ROGUE_EXITLOG), by status.
func readExitLog(t *testing.T, name string) map[int]int {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var pid, code int
		if _, err := fmt.Sscanf(line, "%d %d", &pid, &code); err != nil {
			t.Fatalf("exit log line %q: %v", line, err)
		}
		codes[code]++
	}
	return codes
}
