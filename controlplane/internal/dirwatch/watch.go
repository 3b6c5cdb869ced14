// Package dirwatch rescans adapter directories when they change, so that the handles
// of a registry with Config.Upgrade take over new versions as they are dropped in (see
// registry.Upgrade). It watches with fsnotify (inotify, kqueue, ReadDirectoryChangesW)
// and rescans periodically as well, for file systems whose events are unreliable
// (network mounts) or when the watches cannot be set up.
//
// It is the control plane's own (controlplane/internal, in its layer): controlplane is
// its only importer, and it imports only internal/sentinel.
//
// The control-plane daemon runs it; a host embedding package registry calls
// Registry.Rescan when it chooses. It is a package of its own so that only what
// imports it links fsnotify, and nothing is watched unless [Run] is called.
//
//	go dirwatch.Run(ctx, reg, dirs, nil) // until ctx ends
package dirwatch

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Rescanner is what Run calls: *registry.Registry.
type Rescanner interface {
	Rescan(ctx context.Context, names ...string) error
}

// Options adjust Run. A nil *Options means the defaults.
type Options struct {
	// Interval is how often the directories are rescanned whatever the events say
	// (default 10 s).
	Interval time.Duration
	// Quiet is how long the directories must have been without an event before a
	// rescan starts (default 100 ms): a copy in progress is one rescan, not hundreds.
	Quiet time.Duration
	// Logger receives what Run could not do (a directory it cannot watch, a failed
	// rescan); nil is silent.
	Logger hclog.Logger
}

// Defaults of Options.
const (
	defaultInterval = 10 * time.Second
	defaultQuiet    = 100 * time.Millisecond
)

// Run watches dirs and calls r.Rescan after each burst of changes in them (once the
// directories were quiet for Options.Quiet; a change during a rescan leads to one
// more), and every Options.Interval in any case, until ctx ends; it then returns nil.
// A directory that cannot be watched is logged and left to the periodic rescans.
// Rescan errors are logged; Run goes on.
func Run(ctx context.Context, r Rescanner, dirs []string, opts *Options) error {
	if ctx == nil {
		return sentinel.ErrNilContext // runtime.ErrNilContext
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = defaultInterval
	}
	if o.Quiet <= 0 {
		o.Quiet = defaultQuiet
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	log = log.Named("watch")

	var events <-chan fsnotify.Event
	var werrs <-chan error
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("cannot watch the adapter directories; rescanning periodically only", "interval", o.Interval, "error", err)
	} else {
		defer w.Close()
		for _, d := range dirs {
			if err := w.Add(d); err != nil {
				log.Warn("cannot watch an adapter directory; rescanning it periodically only", "dir", d, "interval", o.Interval, "error", err)
			}
		}
		events, werrs = w.Events, w.Errors
	}

	rescan := func() {
		if err := r.Rescan(ctx); err != nil && ctx.Err() == nil {
			log.Warn("rescan failed", "error", err)
		}
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	quiet := time.NewTimer(o.Quiet)
	quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			quiet.Stop()
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Chmod) || ev.Has(fsnotify.Remove) {
				quiet.Reset(o.Quiet)
			}
		case err, ok := <-werrs:
			if !ok {
				werrs = nil
				continue
			}
			// Events may have been lost (an inotify queue overflow): rescan soon.
			log.Debug("watch error; rescanning", "error", err)
			quiet.Reset(o.Quiet)
		case <-quiet.C:
			rescan()
		case <-tick.C:
			rescan()
		}
	}
}
