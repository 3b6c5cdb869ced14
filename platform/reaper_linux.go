package platform

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/platform/internal/launch"
)

// A sandboxed adapter started with neither cgroup nor PID namespace runs below a reaper
// (launch.Spec.Reaper): the launcher stage, never sandboxed itself, stays as the
// adapter's parent and a child subreaper, so that every descendant of the adapter,
// setsid and double-forked ones included, stays below it; it kills them all once the
// adapter has exited or the host asks (the control pipe, or SIGTERM: its parent-death
// signal), reaps until it has no child left, reports launch.Done on the status pipe, and
// exits as the adapter did. Done proves the tree gone only where the adapter cannot
// interfere with its reaper: Landlock's signal scope keeps it from signalling the
// reaper (which is outside its domain), and Landlock and the seccomp filter keep it
// from tracing it; without both, Verify says why (noProofReaper).

// noProofReaper is why a reaper's report proves nothing without Landlock's signal
// scope and the seccomp filter.
const noProofReaper = "the adapter's reaper is not protected from it: proof needs Landlock's signal scope (ABI 6) and the seccomp filter, so that the adapter can neither signal nor trace its reaper"

// reaperNoProof is why the reaper of a start with plan proves nothing, "" when it does.
func reaperNoProof(plan *sandboxPlan) string {
	if plan.scope && plan.filter != nil {
		return ""
	}
	return noProofReaper
}

// reaperLink is the host's end of a reaper.
type reaperLink struct {
	status  *os.File // the status pipe's read end: launch.Done, then its end
	ctl     *os.File // the control pipe's write end: a byte or its end asks for the end of the tree
	adapter int      // the adapter's pid

	mu     sync.Mutex
	asked  bool // the byte on the control pipe was written
	ended  bool // the status pipe was read to its end
	done   bool // launch.Done came
	closed bool
}

// end asks the reaper to kill the tree. It does not wait.
func (r *reaperLink) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && !r.asked {
		// One byte, however often Kill is called: a full pipe would block. A reaper
		// that is gone reads nothing, so the error is moot.
		r.asked = true
		_, _ = r.ctl.Write([]byte{1})
	}
}

// proven reports whether the reaper said launch.Done, reading the status pipe to its
// end, which comes when the reaper has exited (none of the adapter's processes holds
// it), or until ctx ends.
func (r *reaperLink) proven(ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || r.closed {
		return r.done
	}
	_ = r.status.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { _ = r.status.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(r.status, launchStatusMax))
	r.done = r.done || (len(b) > 0 && b[len(b)-1] == launch.Done)
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		r.ended = true
	}
	return r.done
}

// close releases the host's ends; a reaper still running takes the control pipe's end
// as a request to kill the tree.
func (r *reaperLink) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.status.Close()
		r.ctl.Close()
	}
}
