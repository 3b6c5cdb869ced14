package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/wire"
)

const checkHelp = `
Checks the adapter against the Adapter process protocol v1 and reports each check with
the rules it covers (R.., A.., explained in docs/protocol.md, e.g. docs/protocol.md#r27):
pass, fail or skip.
It does not go through the normal host, which refuses some of these things locally: it
starts the adapter itself (twice: a main session, then one that sends a request before
initialize) and speaks frames directly, so an adapter written in any language can be
checked. Checks, in order:

  handshake [R17 R19]: initialize (id 1) is answered with a result within --timeout.
  catalog [R19-R26]: the catalog is valid: protocol 1, dotted names, nothing "system",
      versions >= 1, non-empty method lists prefixed by their service, no duplicates.
  request before initialize [R27 A7]: a fresh adapter answers a catalog method invalid.
  second initialize [R27 A7]: answered with error invalid.
  unknown method [R42 A22]: answered with error unavailable.
  unknown envelope field [R11 R12 A4]: a request of a catalog method with an extra
      top-level field is answered invalid (a result means it ran).
  cancel of unknown id [R37 A18]: cancels of a finished and of a never-used id get no
      reply within 300ms, and the connection still answers afterwards.
  busy beyond 32 [R40 A16]: of 33 requests sent at once, at least one is answered busy.
  error replies [R28 R30]: every error reply seen has one of the eight codes and a
      message of at most 4096 bytes.
  frames only on stdout [R1 R2 R6 R9-R14 R53 R54]: no framing or envelope error, ever.
  replies match requests [R15 R16 R35]: no unprompted, unknown-id or second reply.
  connected until EOF [R52]: no exit and no end of stdout before stdin is closed.
  exit on stdin EOF [R49]: the process exits within 2s of the end of its stdin.
  nothing left running [R64]: once the adapter exited, its whole process tree is proven
      gone without being killed. The checker starts this session without a PID namespace
      so that leftovers stay visible; the proof needs a cgroup (Linux) or a job object (Windows),
      and the check is skipped where the supervision cannot prove it (run as root, or
      with a delegated cgroup v2, to make it run). Where the adapter may move processes
      out of its cgroup (its user may write an ancestor cgroup's cgroup.procs, as root
      may), an empty cgroup is evidence, not proof: the check passes saying so, and the
      report's cleanup note names it.
  host fault: bad JSON [A28 R2], wrong envelope type [A28 R10], zero-length frame
      [A28 R4]: each sent to a fresh, initialized adapter, which must end the connection:
      exit on its own within 2s, with stdin still open, without crashing (no panic or
      traceback on its stderr).

With --contract FILE (the JSON Schema document of 'adapterctl contract schema'), one
more check per method of the contract, after catalog:

  contract METHOD: the catalog has the method in the contract's service version; the
      method is called with params generated from its params schema, edge cases first
      (no member at all, every value at its maximum, at its minimum, a type that contains
      itself nested 100 deep; unicode text, the largest integers of each type), then a
      few drawn from a fixed seed; each result must be valid against the result schema.
      A wrong type, an extra member, a missing member (a Go struct writes all of its
      members but those tagged omitempty) or a value out of the contract fails it, named
      with its place in the result, and so do params refused by the adapter's decoding
      (invalid "params: ...", as the SDKs word it): its types are not the contract's.
      Other error replies (a method may refuse values its own rules do not allow) are
      listed; when every case is refused, the check is skipped. See docs/contracts.md.

The busy check needs a method that can be made to wait, which a checker cannot guess:
name it with --slow 'METHOD PARAMS_JSON' (e.g. --slow 'example.echo.sleep {"ms":1000}';
a method that waits until it is cancelled works too: once a busy reply has come, the
requests still unanswered are cancelled). Without --slow, a catalog method whose name
ends in ".sleep" is called with {"ms": 1000}, otherwise the first method with {}. If
all 33 requests get normal replies the check is skipped as inconclusive (they may
complete faster than they arrive). Requests use the first method of the catalog with
params {} where a method is needed. Every skipped check says how to make it run.

Exit status 1 when any check failed; skips do not fail. Status 3 when the adapter
could not be started at all; 4 when a session's process tree was not verified gone.
--json prints {"adapter","path","passed","checks":[{"name","rules","status","detail",
"docs"}],"cleanup_verified"}.

` + adapterHelp

// Check statuses.
const (
	statusPass = "pass"
	statusFail = "fail"
	statusSkip = "skip"
)

// checkResult is the outcome of one check.
type checkResult struct {
	Name   string   `json:"name"`
	Rules  []string `json:"rules"`
	Status string   `json:"status"`
	Detail string   `json:"detail"`
	// Docs are where the rules are explained: docs/protocol.md#rN anchors.
	Docs []string `json:"docs"`
}

// protocolDoc is the protocol reference in the repository, and where it is online.
const (
	protocolDoc    = "docs/protocol.md"
	protocolDocURL = "https://github.com/adapterkit/adapterkit/blob/main/docs/protocol.md"
)

// ruleDocs returns the anchors of docs/protocol.md that explain rules ("R9-R14" is
// explained from #r9 on).
func ruleDocs(rules []string) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		first, _, _ := strings.Cut(r, "-")
		out = append(out, protocolDoc+"#"+strings.ToLower(first))
	}
	return out
}

// checkOutput is the JSON shape of check.
type checkOutput struct {
	Adapter         string        `json:"adapter"`
	Path            string        `json:"path"`
	Passed          bool          `json:"passed"`
	Checks          []checkResult `json:"checks"`
	CleanupVerified bool          `json:"cleanup_verified"`
	// CleanupNote, when set, says why the tree of the session observed for R64 (no PID
	// namespace), whose cgroup was found empty, is still not proven gone: its adapter
	// could have moved a process out of its cgroup. CleanupVerified does not count it.
	CleanupNote string `json:"cleanup_note,omitempty"`
}

func runCheck(ctx context.Context, e *env, args []string) int {
	var o adapterOpts
	f := newFlags(e, "check", "[flags] ADAPTER", checkHelp)
	o.register(f)
	timeout := f.Duration("timeout", limits.CallDeadline, "how long to wait for each reply, the handshake included (at most 30s)")
	contractFile := f.String("contract", "", "also check each method of the contract in `FILE` (written by adapterctl contract schema): generated params, results validated against the result schema")
	slow := f.String("slow", "", "the busy check's slow method and its params, one argument: `'METHOD [PARAMS_JSON]'` (default: a *.sleep method with {\"ms\":1000})")
	pos, done, status := f.parse(args)
	if done {
		return status
	}
	if len(pos) != 1 {
		return fail(e, "check", false, usagef("want exactly one ADAPTER, got %d arguments", len(pos)), nil)
	}
	if err := checkTimeout("--timeout", *timeout, limits.CallDeadline); err != nil {
		return fail(e, "check", false, err, nil)
	}
	slowMethod, slowParams, err := parseSlow(*slow)
	if err != nil {
		return fail(e, "check", false, err, nil)
	}
	var contract []contractCheck
	if *contractFile != "" {
		if contract, err = loadContract(*contractFile); err != nil {
			return fail(e, "check", o.json, usagef("--contract: %v", err), nil)
		}
	}
	t, lcfg, err := o.prepare(ctx, e, pos[0])
	if err != nil {
		return fail(e, "check", o.json, err, nil)
	}
	c := &checker{
		proc:       platform.Config{Path: lcfg.Path, Env: lcfg.Env, Stderr: o.checkStderr(lcfg), Sandbox: lcfg.Sandbox},
		config:     lcfg.Configuration,
		timeout:    *timeout,
		slow:       slowMethod,
		slowParams: slowParams,
		contract:   contract,
	}
	err = c.run(ctx)
	o.closeLogs()
	if err != nil {
		return fail(e, "check", o.json, err, c.cleanupErr())
	}
	out := checkOutput{Adapter: t.Name, Path: t.Path, Passed: true, Checks: c.ordered(), CleanupVerified: c.cleanupErr() == nil, CleanupNote: strings.Join(c.notes, "; ")}
	for _, r := range out.Checks {
		if r.Status == statusFail {
			out.Passed = false
		}
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	} else {
		printCheck(e.stdout, out)
	}
	status = ExitOK
	if !out.Passed {
		status = ExitFailed
	}
	if cerr := c.cleanupErr(); cerr != nil {
		reportError(e.stderr, "check", o.json, nil, cerr, worse(status, ExitUnverified))
		status = worse(status, ExitUnverified)
	}
	return status
}

func printCheck(w io.Writer, out checkOutput) {
	fmt.Fprintf(w, "adapterctl check %s (%s)\n", out.Adapter, out.Path)
	counts := map[string]int{}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range out.Checks {
		counts[r.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strings.ToUpper(r.Status), r.Name, strings.Join(r.Rules, " "), r.Detail)
	}
	_ = tw.Flush()
	verdict := "PASSED"
	if !out.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped", verdict, counts[statusPass], counts[statusFail], counts[statusSkip])
	if out.CleanupVerified && out.CleanupNote != "" {
		fmt.Fprintln(w, "; every process tree verified gone, except that the observed session's empty cgroup is no proof: "+out.CleanupNote)
	} else if out.CleanupVerified {
		fmt.Fprintln(w, "; every process tree verified gone")
	} else {
		fmt.Fprintln(w, "; a process tree was NOT verified gone")
	}
	fmt.Fprintf(w, "The rules are explained in %s (%s)", protocolDoc, protocolDocURL)
	if counts[statusFail]+counts[statusSkip] == 0 {
		fmt.Fprintln(w, ".")
		return
	}
	fmt.Fprintln(w, "; for the checks that did not pass:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range out.Checks {
		if r.Status != statusPass {
			fmt.Fprintf(tw, "  %s\t%s\n", r.Name, strings.Join(r.Docs, " "))
		}
	}
	_ = tw.Flush()
}

// parseSlow parses --slow 'METHOD [PARAMS_JSON]'; PARAMS_JSON defaults to {}.
func parseSlow(v string) (string, []byte, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil, nil
	}
	method, params, _ := strings.Cut(v, " ")
	params = strings.TrimSpace(params)
	if params == "" {
		params = "{}"
	}
	if err := proto.ValidateParams([]byte(params)); err != nil {
		return "", nil, usagef("--slow %q: PARAMS_JSON is not one JSON object: %v", v, err)
	}
	return method, []byte(params), nil
}

// checker runs the checks against one adapter.
type checker struct {
	proc    platform.Config
	config  json.RawMessage
	timeout time.Duration
	// slow and slowParams are the busy check's method and params (--slow), or "".
	slow       string
	slowParams []byte
	// contract are the methods of --contract; contractResults their checks, in order.
	contract        []contractCheck
	contractResults []checkResult

	results  map[string]checkResult
	catalog  *wire.Catalog
	sessions []*session
	cleanups []error
	notes    []string // sessions whose empty cgroup is no proof (see cgroupEvidence)
}

// record stores a check's result.
func (c *checker) record(name, status, detail string) {
	if c.results == nil {
		c.results = make(map[string]checkResult)
	}
	c.results[name] = checkResult{Name: name, Rules: checkRules[name], Status: status, Detail: detail, Docs: ruleDocs(checkRules[name])}
}

func (c *checker) pass(name, format string, a ...any) {
	c.record(name, statusPass, fmt.Sprintf(format, a...))
}

func (c *checker) failed(name, format string, a ...any) {
	c.record(name, statusFail, fmt.Sprintf(format, a...))
}

func (c *checker) skip(name, format string, a ...any) {
	c.record(name, statusSkip, fmt.Sprintf(format, a...))
}

// ordered returns the results in the documented order.
func (c *checker) ordered() []checkResult {
	out := make([]checkResult, 0, len(checkOrder)+len(c.contractResults))
	for _, name := range checkOrder {
		if r, ok := c.results[name]; ok {
			out = append(out, r)
		}
		if name == checkCatalog {
			out = append(out, c.contractResults...)
		}
	}
	return out
}

// cleanupErr returns the first session whose tree was not verified gone, or nil.
func (c *checker) cleanupErr() error {
	for _, err := range c.cleanups {
		if err != nil {
			return err
		}
	}
	return nil
}

// start starts a session and remembers it for the aggregate checks.
func (c *checker) start(ctx context.Context) (*session, error) {
	s, err := startSession(ctx, c.proc, true)
	if err != nil {
		return nil, err
	}
	c.sessions = append(c.sessions, s)
	return s, nil
}

// end finishes a session verified and records the result.
func (c *checker) end(s *session) {
	c.cleanups = append(c.cleanups, s.finish())
	if s.note != "" && !slices.Contains(c.notes, s.note) {
		c.notes = append(c.notes, s.note) // sessions alike say it once
	}
}

// run runs every check. It returns an error only when the adapter could not be started
// at all; everything else is a check result.
func (c *checker) run(ctx context.Context) error {
	s, err := c.start(ctx)
	if err != nil {
		return err
	}
	c.mainSession(ctx, s)
	c.end(s)
	if err := ctx.Err(); err != nil {
		return err
	}
	pre, err := c.start(ctx)
	if err != nil {
		c.failed(checkPreInit, "could not start the adapter a second time: %v", err)
	} else {
		c.preInitialize(ctx, pre)
		c.end(pre)
	}
	c.aggregate()
	c.faultSessions(ctx)
	return ctx.Err()
}

// mainSession runs the checks of the main session in order.
func (c *checker) mainSession(ctx context.Context, s *session) {
	c.handshake(ctx, s)
	c.contractChecks(ctx, s)
	live := []struct {
		name string
		run  func(context.Context, *session)
	}{
		{checkSecondInit, c.secondInitialize},
		{checkUnknownMethod, c.unknownMethod},
		{checkUnknownField, c.unknownField},
		{checkCancel, c.cancelUnknown},
		{checkBusy, c.busy},
	}
	for _, l := range live {
		if c.catalog == nil {
			c.skip(l.name, "needs an accepted catalog (see handshake and catalog)")
			continue
		}
		if err := s.broken(); err != nil {
			c.skip(l.name, "the connection broke before this check: %v", err)
			continue
		}
		l.run(ctx, s)
	}
	c.exitOnEOF(ctx, s)
}
