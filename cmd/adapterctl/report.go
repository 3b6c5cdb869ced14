package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// exitStatus maps an error to the exit status documented for it.
func exitStatus(err error) int {
	if err == nil {
		return ExitOK
	}
	var (
		ue *usageError
		oe *lifecycle.OpenError
		ve *wire.ViolationError
		ce *runtime.CallError
		re *discovery.RefError
		le *platform.LaunchError
		cp *controlplane.Error
		se *controlplane.ShutdownError
		de *daemonError
		dd *discovery.DirError
	)
	switch {
	case errors.As(err, &ue), errors.As(err, &re),
		// One "not absolute" sentinel for references and directories: a directory's
		// is a not-found (below), a reference's a usage error.
		errors.Is(err, platform.ErrNotAbsolute) && !errors.As(err, &dd):
		return ExitUsage
	case errors.As(err, &cp):
		return controlStatus(cp)
	case errors.As(err, &se):
		return ExitUnverified
	case errors.As(err, &de) && de.uncertain():
		return ExitUncertain
	case errors.As(err, &de), errors.Is(err, controlplane.ErrSocketInUse), errors.Is(err, controlplane.ErrSocket),
		errors.Is(err, errors.ErrUnsupported), errors.Is(err, controlplane.ErrState):
		return ExitBroken
	case errors.As(err, &oe):
		switch {
		case oe.Cleanup != nil:
			return ExitUnverified
		case oe.Stage == lifecycle.StageConfig, errors.Is(oe.Err, platform.ErrNotAbsolute):
			return ExitUsage
		case errors.Is(oe.Err, platform.ErrNotFound):
			return ExitNotFound
		}
		return ExitBroken
	case errors.Is(err, platform.ErrUnverified):
		return ExitUnverified
	case errors.As(err, &le):
		switch {
		case errors.Is(le.Err, platform.ErrNotAbsolute):
			return ExitUsage
		case errors.Is(le.Err, platform.ErrNotFound):
			return ExitNotFound
		}
		return ExitBroken
	case isNotFound(err):
		return ExitNotFound
	case errors.Is(err, controlplane.ErrConfig), errors.Is(err, controlplane.ErrCertificate): // e.g. a --socket path that is not a socket, a --tls-key that does not load
		return ExitUsage
	case errors.As(err, &ve):
		return ExitBroken
	case errors.As(err, &ce):
		if ce.Cause != nil && ce.Code == wire.CodeClosed {
			return ExitBroken // the host decided closed: the connection ended
		}
		return ExitFailed
	}
	return ExitFailed
}

// controlStatus maps a control-plane error to an exit status, consistently with a
// local command: what the adapter answered is 1, a broken adapter connection 3, an
// unverified cleanup 4, the user's bad request 2, an unknown adapter 5; a daemon that
// cannot serve the request is 3.
func controlStatus(e *controlplane.Error) int {
	d, _ := e.CallDetails()
	switch {
	case d.Cleanup != "":
		return ExitUnverified
	case d.Violation != "", d.Stage != "":
		return ExitBroken
	}
	switch e.Code {
	case controlplane.CodeNotFound:
		return ExitNotFound
	case controlplane.CodeInvalidParams:
		if d.AdapterCode != "" {
			return ExitFailed // the adapter answered invalid
		}
		return ExitUsage
	case controlplane.CodeFrameTooLarge:
		return ExitUsage
	case controlplane.CodeNotImplemented, controlplane.CodeTransportError:
		switch {
		case d.AdapterCode == "":
			return ExitBroken
		case d.AdapterCode == string(wire.CodeClosed) && (d.Uncertain || d.NeverStarted):
			return ExitBroken // the daemon decided closed: the adapter's connection ended
		}
		return ExitFailed
	}
	return ExitBroken // internal, unknown_method, and codes added after this adapterctl
}

// isNotFound reports a discovery failure: nothing matched, or a directory is unusable.
func isNotFound(err error) bool {
	var nf *discovery.NotFoundError
	var de *discovery.DirError
	return errors.As(err, &nf) || errors.As(err, &de)
}

// worse returns the higher-priority of two exit statuses: 4, then 6, 3, 5, 2, 1, 0.
func worse(a, b int) int {
	rank := func(s int) int {
		switch s {
		case ExitUnverified:
			return 7
		case ExitUncertain:
			return 6
		case ExitBroken:
			return 5
		case ExitNotFound:
			return 4
		case ExitUsage:
			return 3
		case ExitFailed:
			return 2
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// callReport is a *runtime.CallError for scripts.
type callReport struct {
	Method       string `json:"method"`
	ID           uint64 `json:"id,omitempty"`
	Code         string `json:"code"`
	RawCode      string `json:"raw_code,omitempty"`
	Message      string `json:"message"`
	Uncertain    bool   `json:"uncertain"`
	NeverStarted bool   `json:"never_started"`
	Cause        string `json:"cause,omitempty"`
}

// errorReport is the JSON object written to stderr for a failed command with --json.
type errorReport struct {
	Command   string      `json:"command"`
	Error     string      `json:"error"`
	Exit      int         `json:"exit"`
	Call      *callReport `json:"call,omitempty"`
	Violation string      `json:"violation,omitempty"`
	Detail    string      `json:"detail,omitempty"`
	Cleanup   string      `json:"cleanup,omitempty"`
	// Stderr is, when the adapter exited during the handshake, the last lines it wrote
	// to standard error (quoted): usually why it could not start.
	Stderr []string `json:"stderr,omitempty"`
	// Stage is, when the adapter did not start, how far starting it got ("spawn",
	// "handshake"): nothing of the command's own call was sent.
	Stage string `json:"stage,omitempty"`
	// Control is the daemon's error, for a command sent to a daemon (--socket).
	Control *controlReport `json:"control,omitempty"`
	// Hint says what to do, when adapterctl knows (hints.go).
	Hint string `json:"hint,omitempty"`
}

// controlReport is a *controlplane.Error for scripts.
type controlReport struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Adapter string `json:"adapter,omitempty"`
	Stage   string `json:"stage,omitempty"`
}

func newErrorReport(cmd string, err error, cleanup error, status int) errorReport {
	r := errorReport{Command: cmd, Exit: status}
	if err != nil {
		r.Error = err.Error()
		var ce *runtime.CallError
		if errors.As(err, &ce) {
			r.Call = &callReport{Method: ce.Method, ID: ce.ID, Code: string(ce.Code), RawCode: ce.RawCode,
				Message: ce.Message, Uncertain: ce.Uncertain, NeverStarted: ce.NeverStarted}
			if ce.RawCode == string(ce.Code) {
				r.Call.RawCode = ""
			}
			if ce.Cause != nil {
				r.Call.Cause = ce.Cause.Error()
			}
		}
		var oe *lifecycle.OpenError
		if errors.As(err, &oe) {
			r.Stderr = oe.Stderr
			r.Stage = string(oe.Stage)
		}
		var ve *wire.ViolationError
		if errors.As(err, &ve) {
			r.Violation = ve.Kind.String()
			if ve.Err != nil {
				r.Detail = ve.Err.Error()
			}
		}
		var cp *controlplane.Error
		if errors.As(err, &cp) {
			r.Control = &controlReport{Code: string(cp.Code), Message: cp.Message}
			if d, ok := cp.CallDetails(); ok {
				r.Control.Adapter, r.Control.Stage = d.Adapter, d.Stage
				if d.AdapterCode != "" {
					r.Call = &callReport{Method: d.Method, Code: d.AdapterCode, RawCode: d.RawCode,
						Message: cp.Message, Uncertain: d.Uncertain, NeverStarted: d.NeverStarted}
				}
				r.Violation, r.Cleanup = d.Violation, d.Cleanup
				if r.Detail == "" {
					r.Detail = d.ViolationDetail
				}
			}
		}
	}
	r.Hint = hintFor(err)
	if r.Hint == "" && r.Violation == wire.Output.String() {
		r.Hint = outputHint // reported by a daemon
	}
	if cleanup != nil {
		r.Cleanup = cleanup.Error()
		if r.Error == "" {
			r.Error = "cleanup not verified: " + cleanup.Error()
		}
	}
	return r
}

// reportError writes a failed command's error to w (stderr): text, or one JSON object
// when asJSON. cleanup is a failed verification of the adapter's end, if any.
func reportError(w io.Writer, cmd string, asJSON bool, err, cleanup error, status int) {
	r := newErrorReport(cmd, err, cleanup, status)
	if asJSON {
		enc := json.NewEncoder(w)
		_ = enc.Encode(r)
		return
	}
	if err != nil {
		if r.Call != nil {
			c := r.Call
			fmt.Fprintf(w, "adapterctl %s: %s: error %s", cmd, c.Method, c.Code)
			if r.Call.RawCode != "" {
				fmt.Fprintf(w, " (sent as %q)", c.RawCode)
			}
			if c.Message != "" {
				fmt.Fprintf(w, ": %s", c.Message)
			}
			fmt.Fprintln(w)
			switch {
			case r.Stage != "" && c.Method == proto.MethodInitialize:
				// The start failed: whatever became of initialize, the command's call
				// (if it has one) was never sent.
				fmt.Fprintf(w, "  outcome: never started (the adapter did not start, stage %s: no call was sent to it)\n", r.Stage)
			case c.NeverStarted:
				fmt.Fprintln(w, "  outcome: never started (nothing was sent to the adapter)")
			case c.Uncertain:
				fmt.Fprintln(w, "  outcome: uncertain (the adapter may or may not have acted)")
			case c.Cause != "" || r.Violation != "":
				fmt.Fprintln(w, "  outcome: decided by the host, not answered by the adapter")
			default:
				fmt.Fprintln(w, "  outcome: the adapter answered with this error")
			}
			if c.Cause != "" && r.Violation == "" {
				fmt.Fprintf(w, "  cause: %s\n", c.Cause)
			}
		} else {
			fmt.Fprintf(w, "adapterctl %s: %v\n", cmd, err)
		}
		if r.Control != nil && r.Call != nil {
			fmt.Fprintf(w, "  daemon: %s\n", r.Control.Code)
		}
		if r.Control != nil && r.Control.Stage != "" {
			fmt.Fprintf(w, "  stage: %s\n", r.Control.Stage)
		}
		if r.Violation != "" {
			fmt.Fprintf(w, "  connection broken: %s\n", r.Violation)
			if r.Detail != "" {
				fmt.Fprintf(w, "  detail: %s\n", r.Detail)
			}
		}
		if len(r.Stderr) > 0 {
			fmt.Fprintln(w, "  the adapter's last standard error:")
			for _, l := range r.Stderr {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		if r.Hint != "" {
			fmt.Fprintf(w, "  what to do: %s\n", r.Hint)
		}
	}
	if r.Cleanup != "" {
		fmt.Fprintf(w, "adapterctl %s: cleanup NOT verified, processes may still run: %s\n", cmd, r.Cleanup)
	}
}

// fail reports err (and a failed cleanup) and returns the exit status for both.
func fail(e *env, cmd string, asJSON bool, err, cleanup error) int {
	status := exitStatus(err)
	if cleanup != nil {
		status = worse(status, ExitUnverified)
	}
	if ue := (*usageError)(nil); errors.As(err, &ue) && !asJSON {
		fmt.Fprintf(e.stderr, "adapterctl %s: %v\nRun 'adapterctl %s --help' for usage.\n", cmd, err, cmd)
		return status
	}
	reportError(e.stderr, cmd, asJSON, err, cleanup, status)
	return status
}
