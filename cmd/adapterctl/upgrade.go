package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/limits"
)

const upgradeHelp = `
The daemon follows new adapter versions by itself: an adapter it opened by name takes
over the newest version of its major version dropped into its directories, once the
file is complete and the new version started, answered its handshake and offers every
service and method the old one did; calls in flight finish on the old version. This
command makes it look now (for NAME only, when given) instead of at the next change
or periodic rescan, waits until each new version took over or was refused, and shows
the adapters concerned: the version serving, the upgrades so far, the old versions
still finishing calls, and why the last new version was refused. Exit status 1 when
an adapter shown has a refused upgrade.

A refused file is not started by any path (call by name, version or path,
capabilities, restarts, daemon restarts) until a new file replaces it, its pin is
removed, or --retry NAME forgets NAME's refusals and tries its newest version again.
`

// upgradeWait bounds the wait for Upgrade: the settle interval, then a new version's
// start within the call deadline (and one more, should the newest be refused).
const upgradeWait = 2*limits.CallDeadline + answerSlack

func runUpgrade(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	var retry bool
	pos, done, status := clientCommandArgs(e, "upgrade", "NAME", &o, func(f *flags) {
		f.BoolVar(&retry, "retry", false, "forget the refusals of NAME's files first, so that they are tried again (needs NAME)")
	}, args)
	if done {
		return status
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	if retry && name == "" {
		return fail(e, "upgrade", false, usagef("--retry needs the adapter NAME"), nil)
	}
	var r *controlplane.UpgradeResult
	err := withDaemon(ctx, &o, upgradeWait, func(ctx context.Context, c *controlplane.Client) (err error) {
		if retry {
			r, err = c.RetryUpgrade(ctx, name)
		} else {
			r, err = c.Upgrade(ctx, name)
		}
		return err
	})
	if err != nil {
		return fail(e, "upgrade", o.json, err, nil)
	}
	refused := false
	for _, a := range r.Adapters {
		refused = refused || a.UpgradeError != ""
	}
	if o.json {
		err = printJSON(e.stdout, r)
	} else if len(r.Adapters) == 0 {
		_, err = fmt.Fprintf(e.stdout, "no adapter %sis open: the daemon opens adapters at their first call (or at 'adapterctl upgrade NAME')\n", orEmpty(name))
	} else {
		err = printAdapters(e.stdout, r.Adapters)
	}
	if err == nil && !o.json && r.RefusedNotSaved != "" {
		_, err = fmt.Fprintf(e.stdout, "  warning: %s\n", r.RefusedNotSaved)
	}
	if err != nil {
		return finish(e, "upgrade", err)
	}
	if refused {
		return ExitFailed
	}
	return ExitOK
}

func orEmpty(name string) string {
	if name == "" {
		return ""
	}
	return name + " "
}

// printAdapters prints the table of open adapters of a status, then the old versions
// still finishing calls and the refused upgrades.
func printAdapters(w io.Writer, adapters []controlplane.AdapterStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  NAME\tVERSION\tSTATE\tPID\tRESTARTS\tUPGRADES\tIN FLIGHT\tABANDONED\tSTARTS\tSUPERVISION\tPATH\n")
	for _, a := range adapters {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", a.Name, a.Version, a.State, a.PID, a.Restarts,
			a.Upgrades, a.InFlight, a.Abandoned, startsText(a.Starts, a.FailedStarts), orNone(a.Mechanism), a.Path)
	}
	for _, a := range adapters {
		for _, d := range a.Draining {
			fmt.Fprintf(tw, "  %s\t%s\tdraining\t%d\t\t\t%d\t\t\t\t%s\n", a.Name, d.Version, d.PID, d.InFlight, d.Path)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew := &errWriter{w: w}
	for _, a := range adapters {
		if b := a.Backoff; b != nil {
			next := "the next call starts it"
			if b.NextTry != nil {
				next = "next try at " + b.NextTry.Format(time.RFC3339Nano)
			}
			ew.printf("  %s: %s in a row, %s: %s\n", a.Name, count(b.Failures, "failed start", "failed starts"), next, b.LastError)
		}
		if a.UpgradeError != "" {
			ew.printf("  %s: upgrade refused, %s keeps serving: %s\n", a.Name, a.Version, a.UpgradeError)
		}
	}
	return ew.err
}

// printRefused prints the refused adapter files of a status, one line each.
func printRefused(w io.Writer, refused []controlplane.RefusedStatus) error {
	ew := &errWriter{w: w}
	for _, rf := range refused {
		serving := "nothing serves " + rf.Name
		if rf.Serving != "" {
			serving = "serving " + rf.Serving
		}
		ew.printf("  %s %s refused at %s: %s; %s (%s; 'adapterctl upgrade --retry %s' tries it again)\n",
			rf.Name, rf.Version, rf.At.UTC().Format(time.RFC3339), rf.Reason, serving, rf.Path, rf.Name)
	}
	return ew.err
}
