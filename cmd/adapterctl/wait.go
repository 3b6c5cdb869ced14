package main

import (
	"context"
	"errors"

	"fmt"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
)

const waitHelp = `
A daemon started in the background ('adapterctl serve ... &') takes a moment before its
socket answers; a script that asks it at once races it. wait asks the daemon to answer
a ping, again every 50ms, until it does or --timeout passes:

  adapterctl serve --socket build/ak.sock build/adapters &
  adapterctl wait --socket build/ak.sock
  adapterctl status --socket build/ak.sock

It prints nothing when the daemon answered, and exits 0. It exits 3 when the daemon did
not answer within --timeout, naming why the last try failed, and at once when a remote
daemon refused this client's certificate, when the socket's daemon is not run by this
user or root, or when the daemon refused this client's user (trying again would not
change any of these).
`

// waitRetry is how long wait pauses between two tries.
const waitRetry = 50 * time.Millisecond

// runWait is the wait command: it returns once the daemon answers Ping.
func runWait(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	var timeout time.Duration
	register := func(f *flags) {
		f.DurationVar(&timeout, "timeout", 30*time.Second, "give up after `D`")
	}
	if done, status := clientCommand(e, "wait", &o, register, args); done {
		return status
	}
	if timeout <= 0 {
		return fail(e, "wait", o.json, usagef("--timeout %v: want a positive duration", timeout), nil)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		err := withDaemon(wctx, &o, timeout, func(ctx context.Context, c *controlplane.Client) error {
			_, err := c.Ping(ctx)
			return err
		})
		if err == nil {
			return ExitOK
		}
		var ue *usageError
		var cpe *controlplane.Error
		var de *daemonError
		switch {
		case errors.As(err, &ue), errors.As(err, &cpe):
			return fail(e, "wait", o.json, err, nil) // an answer, though not the one wanted
		case errors.As(err, &de) && (de.what == whatRefused || de.what == whatUntrusted):
			return fail(e, "wait", o.json, err, nil)
		case wctx.Err() == nil || last == nil:
			last = err
		}
		select {
		case <-ctx.Done():
			return fail(e, "wait", o.json, ctx.Err(), nil)
		case <-wctx.Done():
			te := &daemonError{socket: o.where(), what: fmt.Sprintf("no answer within %v", timeout), err: last}
			if errors.As(last, &de) {
				te.what += "; the last try: " + de.what
				te.err = de.err
			}
			return fail(e, "wait", o.json, te, nil)
		case <-time.After(waitRetry):
		}
	}
}
