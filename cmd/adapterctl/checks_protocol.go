package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/wire"
)

// Check names, as printed.
const (
	checkHandshake     = "handshake"
	checkCatalog       = "catalog"
	checkPreInit       = "request before initialize"
	checkSecondInit    = "second initialize"
	checkUnknownMethod = "unknown method"
	checkUnknownField  = "unknown envelope field"
	checkCancel        = "cancel of unknown id"
	checkBusy          = "busy beyond 32"
	checkErrors        = "error replies"
	checkFrames        = "frames only on stdout"
	checkReplies       = "replies match requests"
	checkConnected     = "connected until EOF"
	checkEOF           = "exit on stdin EOF"
	checkLeftovers     = "nothing left running"
	checkFaultJSON     = "host fault: bad JSON"
	checkFaultType     = "host fault: wrong envelope type"
	checkFaultEmpty    = "host fault: zero-length frame"
)

// checkOrder is the order of the report.
var checkOrder = []string{
	checkHandshake, checkCatalog, checkPreInit, checkSecondInit, checkUnknownMethod,
	checkUnknownField, checkCancel, checkBusy, checkErrors, checkFrames, checkReplies,
	checkConnected, checkEOF, checkLeftovers, checkFaultJSON, checkFaultType, checkFaultEmpty,
}

// checkRules names the rules (docs/protocol.md) each check covers.
var checkRules = map[string][]string{
	checkHandshake:     {"R17", "R19"},
	checkCatalog:       {"R19", "R20", "R21", "R22", "R23", "R24", "R25", "R26"},
	checkPreInit:       {"R27", "A7"},
	checkSecondInit:    {"R27", "A7"},
	checkUnknownMethod: {"R42", "A22"},
	checkUnknownField:  {"R11", "R12", "A4"},
	checkCancel:        {"R37", "A18"},
	checkBusy:          {"R40", "A16"},
	checkErrors:        {"R28", "R30"},
	checkFrames:        {"R1", "R2", "R6", "R9-R14", "R53", "R54"},
	checkReplies:       {"R15", "R16", "R35"},
	checkConnected:     {"R52"},
	checkEOF:           {"R49"},
	checkLeftovers:     {"R64"},
	checkFaultJSON:     {"A28", "R2"},
	checkFaultType:     {"A28", "R10"},
	checkFaultEmpty:    {"A28", "R4"},
}

// cancelQuiet is how long a cancel of an unknown id must stay unanswered (R37).
const cancelQuiet = 300 * time.Millisecond

// sleepSuffix and sleepParams are the busy check's heuristic for a method that waits.
const (
	sleepSuffix = ".sleep"
	sleepParams = `{"ms":1000}`
)

// probeMethod names the method of checks that need one when the catalog has none.
const probeMethod = "adapterctl.check.probe"

// firstMethod returns the first method of the catalog, or "".
func (c *checker) firstMethod() string {
	if c.catalog == nil {
		return ""
	}
	for _, s := range c.catalog.Services {
		if len(s.Methods) > 0 {
			return s.Methods[0]
		}
	}
	return ""
}

// short quotes an adapter's message, shortened for a one-line report.
func short(s string) string {
	const max = 80
	if len(s) > max {
		s = proto.TruncateMessage(s[:max]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// expectError records name as passed when the reply is an error with code want.
func (c *checker) expectError(name string, m proto.Message, err error, want wire.Code, ifResult string) {
	switch {
	case err != nil:
		c.failed(name, "no reply: %v", err)
	case m.Type == proto.TypeResult:
		c.failed(name, "answered with a result, want error %s: %s", want, ifResult)
	case m.RawCode != string(want):
		c.failed(name, "answered with error %q %s, want %s", m.RawCode, short(m.Message), want)
	default:
		c.pass(name, "error %s %s", want, short(m.Message))
	}
}

// handshake sends initialize as a host does (R17) and validates the catalog (R19-R26).
func (c *checker) handshake(ctx context.Context, s *session) {
	start := time.Now()
	id, err := s.request(proto.MethodInitialize, proto.AppendInitializeParams(nil, c.config))
	var m proto.Message
	if err == nil {
		m, err = s.await(ctx, id, c.timeout)
	}
	switch {
	case err != nil:
		c.failed(checkHandshake, "initialize not answered: %v", err)
	case m.Type == proto.TypeError:
		c.failed(checkHandshake, "initialize answered with error %q %s", m.RawCode, short(m.Message))
	default:
		c.pass(checkHandshake, "result after %v (bound %v)", time.Since(start).Round(time.Millisecond), c.timeout)
	}
	if err != nil || m.Type != proto.TypeResult {
		c.skip(checkCatalog, "no initialize result")
		return
	}
	cat, err := proto.DecodeCatalog(m.Value)
	if err != nil {
		c.failed(checkCatalog, "%v", err)
		return
	}
	c.catalog = cat
	methods := 0
	for _, svc := range cat.Services {
		methods += len(svc.Methods)
	}
	c.pass(checkCatalog, "%s, %s", count(len(cat.Services), "service", "services"), count(methods, "method", "methods"))
}

// secondInitialize: a second initialize is answered invalid (R27, A7).
func (c *checker) secondInitialize(ctx context.Context, s *session) {
	id, err := s.request(proto.MethodInitialize, proto.AppendInitializeParams(nil, c.config))
	var m proto.Message
	if err == nil {
		m, err = s.await(ctx, id, c.timeout)
	}
	c.expectError(checkSecondInit, m, err, wire.CodeInvalid, "initialized twice")
}

// unknownMethod: a method the adapter does not serve gets an error reply, unavailable
// per A22 (R42).
func (c *checker) unknownMethod(ctx context.Context, s *session) {
	m, err := c.callUnknown(ctx, s)
	c.expectError(checkUnknownMethod, m, err, wire.CodeUnavailable, "an unadvertised method ran")
}

// callUnknown sends a request for a method the catalog does not advertise.
func (c *checker) callUnknown(ctx context.Context, s *session) (proto.Message, error) {
	method := "adapterctl.check.unknown"
	for proto.Methods(c.catalog)[method] {
		method += "-x"
	}
	id, err := s.request(method, nil)
	if err != nil {
		return proto.Message{}, err
	}
	return s.await(ctx, id, c.timeout)
}

// unknownField: a request with an extra top-level field is answered invalid and not
// executed (R12, A4).
func (c *checker) unknownField(ctx context.Context, s *session) {
	method := c.firstMethod()
	if method == "" {
		c.skip(checkUnknownField, "the catalog advertises no method")
		return
	}
	id, err := s.requestRaw(func(id uint64) []byte {
		b := proto.AppendRequest(nil, id, method, nil)
		return append(b[:len(b)-1], `,"adapterctl":true}`...)
	})
	var m proto.Message
	if err == nil {
		m, err = s.await(ctx, id, c.timeout)
	}
	c.expectError(checkUnknownField, m, err, wire.CodeInvalid, method+" ran despite the unknown field")
}

// cancelUnknown: cancels of a finished id (initialize, 1) and of an id never used get
// no reply and leave the connection working (R37, A18).
func (c *checker) cancelUnknown(ctx context.Context, s *session) {
	for _, id := range []uint64{1, limits.MaxRequestID} {
		if err := s.cancel(id); err != nil {
			c.failed(checkCancel, "writing cancel %d: %v", id, err)
			return
		}
	}
	n, err := s.quiet(ctx, cancelQuiet)
	switch {
	case err != nil:
		c.failed(checkCancel, "%v", err)
		return
	case n > 0:
		c.failed(checkCancel, "%s arrived after cancels of ids 1 (finished) and %d (never used)", count(n, "reply", "replies"), uint64(limits.MaxRequestID))
		return
	}
	if err := s.broken(); err != nil {
		c.failed(checkCancel, "the connection broke after the cancels: %v", err)
		return
	}
	if _, err := c.callUnknown(ctx, s); err != nil {
		c.failed(checkCancel, "no reply to a request after the cancels: %v", err)
		return
	}
	c.pass(checkCancel, "no reply within %v; the connection still answers", cancelQuiet)
}

// slowHint says how to make the busy check conclusive.
const slowHint = `to make it run, name a method that can be made to wait: --slow 'METHOD {"param":...}'`

// slowMethod returns the method and params of the busy check: --slow's, else a
// catalog method named *.sleep with {"ms":1000}, else the first method with {}. It
// returns "" and why when there is none to use.
func (c *checker) slowMethod() (method string, params []byte, why string) {
	if c.slow != "" {
		if !proto.Methods(c.catalog)[c.slow] {
			return "", nil, fmt.Sprintf("--slow names %s, which the catalog does not advertise", c.slow)
		}
		return c.slow, c.slowParams, ""
	}
	method = c.firstMethod()
	for m := range proto.Methods(c.catalog) {
		if strings.HasSuffix(m, sleepSuffix) && (params == nil || m < method) {
			method, params = m, []byte(sleepParams)
		}
	}
	if method == "" {
		return "", nil, "the catalog advertises no method"
	}
	return method, params, ""
}

// busy: 33 requests at once; beyond 32 in flight the adapter answers busy (R40, A16).
// Once a busy reply has come, the requests still unanswered are cancelled (so a method
// that waits until it is cancelled can serve as the slow method); every request must
// still get its one reply (R37).
func (c *checker) busy(ctx context.Context, s *session) {
	method, params, why := c.slowMethod()
	if method == "" {
		c.skip(checkBusy, "%s; %s", why, slowHint)
		return
	}
	n := limits.MaxInFlight + 1
	ids, err := s.requests(n, method, params)
	if err != nil {
		c.failed(checkBusy, "writing %d requests: %v", n, err)
		return
	}
	busy := func(s *session) (answered, busy int) {
		for _, id := range ids {
			if m, ok := s.replies[id]; ok {
				answered++
				if m.Type == proto.TypeError && m.RawCode == string(wire.CodeBusy) {
					busy++
				}
			}
		}
		return answered, busy
	}
	done := func(s *session) bool { a, b := busy(s); return a == n || b > 0 }
	if err := s.waitUntil(ctx, c.timeout, done); err == nil {
		for _, id := range ids {
			if !s.answered(id) {
				if err := s.cancel(id); err != nil {
					c.failed(checkBusy, "writing cancel %d: %v", id, err)
					return
				}
			}
		}
	}
	all := func(s *session) bool { a, _ := busy(s); return a == n }
	if err := s.waitUntil(ctx, c.timeout, all); err != nil {
		s.mu.Lock()
		answered, _ := busy(s)
		s.mu.Unlock()
		c.failed(checkBusy, "%d of %d requests of %s answered (the others cancelled once one was busy): %v", answered, n, method, err)
		return
	}
	s.mu.Lock()
	_, nbusy := busy(s)
	s.mu.Unlock()
	what := method + " {}"
	if params != nil {
		what = method + " " + string(params)
	}
	if nbusy == 0 {
		c.skip(checkBusy, "inconclusive: all %d requests of %s got normal replies (they may complete faster than they arrive); %s", n, what, slowHint)
		return
	}
	c.pass(checkBusy, "%d of %d requests of %s answered busy", nbusy, n, what)
}

// exitOnEOF closes stdin and checks that the adapter exits within 2 s (R49), then that
// nothing of its tree is left running without a kill (R64).
func (c *checker) exitOnEOF(ctx context.Context, s *session) {
	s.mu.Lock()
	early := s.exitedEarly
	s.mu.Unlock()
	start := time.Now()
	s.disconnect()
	switch {
	case early:
		c.skip(checkEOF, "the process had exited before stdin was closed (see %s)", checkConnected)
	case s.waitExit(ctx, limits.ProcessCleanup):
		c.pass(checkEOF, "exited %v after stdin EOF (bound %v)", time.Since(start).Round(time.Millisecond), limits.ProcessCleanup)
	default:
		c.failed(checkEOF, "still running %v after stdin EOF", limits.ProcessCleanup)
		c.skip(checkLeftovers, "the adapter did not exit on its own; its tree is killed")
		return
	}
	vctx, cancel := context.WithTimeout(ctx, limits.ProcessCleanup)
	defer cancel()
	mech := s.tree.Supervision().Mechanism
	err := s.tree.Verify(vctx)
	var ue *platform.UnverifiedError
	provable := mech&(platform.MechCgroup|platform.MechPidNamespace|platform.MechJobObject) != 0
	switch {
	case err == nil:
		c.pass(checkLeftovers, "the whole tree ended with the adapter, proven without a kill (%s)", mech)
	case cgroupEvidence(err, s.tree):
		c.pass(checkLeftovers, "the adapter's cgroup emptied with it, without a kill (%s); no proof against a process it moved out: %s", mech, s.tree.Supervision().NoProof)
	case errors.As(err, &ue) && len(ue.Pids) > 0:
		c.failed(checkLeftovers, "descendants still running after the adapter exited: pids %v", ue.Pids)
	case provable:
		c.failed(checkLeftovers, "the tree was not proven gone within %v of the adapter's exit: %v", limits.ProcessCleanup, err)
	default:
		c.skip(checkLeftovers, "supervision %s cannot prove the tree gone: %v; to make it run, run as root or with a delegated cgroup v2 (Linux), or on Windows", mech, err)
	}
}

// preInitialize: on a fresh adapter, a request before initialize is answered invalid
// and not executed (R27, A7).
func (c *checker) preInitialize(ctx context.Context, s *session) {
	method := c.firstMethod()
	if method == "" {
		method = probeMethod
	}
	id, err := s.request(method, nil)
	var m proto.Message
	if err == nil {
		m, err = s.await(ctx, id, c.timeout)
	}
	c.expectError(checkPreInit, m, err, wire.CodeInvalid, method+" ran before initialize")
	s.disconnect()
	s.waitExit(ctx, limits.ProcessCleanup)
}

// aggregate records the checks over everything both sessions saw.
func (c *checker) aggregate() {
	names := []string{"main session", "pre-initialize session"}
	var replies, badCode, longMsg []string
	var frames, unexpected, early []string
	for i, s := range c.sessions {
		s.mu.Lock()
		for _, r := range s.errorReplies {
			replies = append(replies, r.rawCode)
			if !proto.ValidCode(wire.Code(r.rawCode)) {
				badCode = append(badCode, fmt.Sprintf("id %d: code %q", r.id, r.rawCode))
			}
			if r.messageLen > limits.MaxErrorMessage {
				longMsg = append(longMsg, fmt.Sprintf("id %d: message of %d bytes", r.id, r.messageLen))
			}
		}
		if s.streamErr != nil {
			frames = append(frames, fmt.Sprintf("%s: %v", names[i], s.streamErr))
		}
		for _, u := range s.unexpected {
			unexpected = append(unexpected, names[i]+": "+u)
		}
		if s.exitedEarly {
			early = append(early, names[i]+": the process exited before stdin was closed")
		} else if s.endedEarly {
			early = append(early, names[i]+": stdout ended before stdin was closed")
		}
		s.mu.Unlock()
	}
	switch {
	case len(replies) == 0:
		c.skip(checkErrors, "no error reply was seen")
	case len(badCode)+len(longMsg) > 0:
		c.failed(checkErrors, "%s", strings.Join(append(badCode, longMsg...), "; "))
	default:
		c.pass(checkErrors, "%s checked", count(len(replies), "error reply", "error replies"))
	}
	report := func(name string, problems []string, ok string) {
		if len(problems) > 0 {
			c.failed(name, "%s", strings.Join(problems, "; "))
		} else {
			c.pass(name, "%s", ok)
		}
	}
	report(checkFrames, frames, "no framing or envelope error in either session")
	report(checkReplies, unexpected, "exactly one reply per request, none unprompted")
	report(checkConnected, early, "stdout open and process running until stdin EOF")
}
