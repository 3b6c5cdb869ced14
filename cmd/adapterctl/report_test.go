package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// TestExitStatus: every kind of error maps to its documented exit status, including
// those the other tests cannot provoke on every machine (an unverified cleanup, R63).
func TestExitStatus(t *testing.T) {
	unverified := &platform.UnverifiedError{Mechanism: platform.MechProcessGroup, Reason: "no proof"}
	exited := &wire.ViolationError{Kind: wire.ProcessExited, Err: errors.New("exit status 3")}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"usage", usagef("bad"), ExitUsage},
		{"bad reference", &discovery.RefError{Raw: "X", Reason: discovery.ErrRefName}, ExitUsage},
		{"not found", &discovery.NotFoundError{Err: discovery.ErrNotFound}, ExitNotFound},
		{"bad directory", &discovery.DirError{Dir: "x", Reason: discovery.ErrNotAbsolute}, ExitNotFound},
		{"launch: missing", &platform.LaunchError{Path: "/x", Err: platform.ErrNotFound}, ExitNotFound},
		{"launch: not executable", &platform.LaunchError{Path: "/x", Err: platform.ErrNotExecutable}, ExitBroken},
		{"open: spawn missing", &lifecycle.OpenError{Stage: lifecycle.StageSpawn, Err: &platform.LaunchError{Err: platform.ErrNotFound}}, ExitNotFound},
		{"open: config", &lifecycle.OpenError{Stage: lifecycle.StageConfig, Err: runtime.ErrInvalidParams}, ExitUsage},
		{"open: handshake", &lifecycle.OpenError{Stage: lifecycle.StageHandshake, Err: exited}, ExitBroken},
		{"open: handshake, cleanup unverified", &lifecycle.OpenError{Stage: lifecycle.StageHandshake, Err: exited, Cleanup: unverified}, ExitUnverified},
		{"unverified", fmt.Errorf("close: %w", unverified), ExitUnverified},
		{"adapter error reply", &runtime.CallError{Method: "a.b", ID: 2, Code: wire.CodeDenied}, ExitFailed},
		{"adapter replied closed", &runtime.CallError{Method: "a.b", ID: 2, Code: wire.CodeClosed}, ExitFailed},
		{"never started", &runtime.CallError{Method: "a.b", Code: wire.CodeUnavailable, NeverStarted: true, Cause: runtime.ErrUnknownMethod}, ExitFailed},
		{"deadline", &runtime.CallError{Method: "a.b", ID: 2, Code: wire.CodeDeadline, Uncertain: true, Cause: context.DeadlineExceeded}, ExitFailed},
		{"violation", &runtime.CallError{Method: "a.b", ID: 2, Code: wire.CodeClosed, Uncertain: true, Cause: exited}, ExitBroken}, // R51
		{"closed by the host", &runtime.CallError{Method: "a.b", Code: wire.CodeClosed, NeverStarted: true, Cause: runtime.ErrClosed}, ExitBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitStatus(tt.err); got != tt.want {
				t.Errorf("exitStatus(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestFailUnverified: an unverified cleanup outranks the error and is said on stderr,
// as text and as JSON (R63).
func TestFailUnverified(t *testing.T) {
	cleanup := &platform.UnverifiedError{Mechanism: platform.MechProcessGroup, Reason: "no proof", Pids: []int{42}}
	callErr := &runtime.CallError{Method: "a.b", ID: 2, Code: wire.CodeDenied, Message: "no"}
	for _, asJSON := range []bool{false, true} {
		var stderr bytes.Buffer
		e := &env{stdout: &bytes.Buffer{}, stderr: &stderr}
		if got := fail(e, "call", asJSON, callErr, cleanup); got != ExitUnverified {
			t.Errorf("json %v: exit %d, want %d", asJSON, got, ExitUnverified)
		}
		for _, s := range []string{"denied", "not verified", "[42]"} {
			if !strings.Contains(stderr.String(), s) {
				t.Errorf("json %v: stderr lacks %q:\n%s", asJSON, s, stderr.String())
			}
		}
		if got := fail(e, "inspect", asJSON, nil, cleanup); got != ExitUnverified {
			t.Errorf("json %v: cleanup alone: exit %d, want %d", asJSON, got, ExitUnverified)
		}
	}
}
