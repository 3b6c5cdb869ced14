package controlplane

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/registry"
)

// Retries of a record of refused files that could not be saved: the first after
// refusedRetryFirst, each next one after twice the wait, at most refusedRetryMax.
var (
	refusedRetryFirst = time.Second
	refusedRetryMax   = time.Minute
)

// refusedSaver keeps the record of refused adapter files in the state directory
// (registry.Config.OnRefused). A save that fails is not lost quietly: the record is
// held in memory, status says so (and the daemon's health is degraded), failures are
// counted, and the save is tried again at the next change and after a backoff, until
// it succeeds or the daemon stops.
type refusedSaver struct {
	dir  string
	log  hclog.Logger
	base context.Context // ends at shutdown: ends the retries

	mu       sync.Mutex
	pending  []registry.Refusal // the record not saved yet; valid while errMsg != ""
	errMsg   string             // why the last save failed; "" when the record is saved
	failures uint64
	retrying bool // a retry goroutine runs
}

func newRefusedSaver(base context.Context, dir string, log hclog.Logger) *refusedSaver {
	return &refusedSaver{dir: dir, log: log, base: base}
}

// save writes list (the whole record); on failure it schedules retries.
func (s *refusedSaver) save(list []registry.Refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tryLocked(slices.Clone(list))
}

// tryLocked writes list, recording the outcome; s.mu is held, which orders the writes.
func (s *refusedSaver) tryLocked(list []registry.Refusal) bool {
	err := saveRefused(s.dir, list)
	if err == nil {
		if s.errMsg != "" {
			s.log.Info("the record of refused adapter files is saved again", "dir", s.dir)
		}
		s.pending, s.errMsg = nil, ""
		return true
	}
	s.failures++
	s.pending = list
	s.errMsg = "the record of refused adapter files could not be saved in " + s.dir + ": " + err.Error() +
		"; it is held in memory only (a restart would forget it) and is saved again by itself once the directory can be written"
	s.log.Error("the record of refused adapter files could not be saved: it is held in memory only, and retried", "dir", s.dir, "error", err)
	if !s.retrying {
		s.retrying = true
		go s.retry()
	}
	return false
}

// retry saves the pending record again with a growing wait, until it is saved (by
// this or by a later change) or the daemon stops.
func (s *refusedSaver) retry() {
	wait := refusedRetryFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-s.base.Done():
			s.mu.Lock()
			s.retrying = false
			s.mu.Unlock()
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.errMsg == "" || s.tryLocked(s.pending) {
			s.retrying = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		wait = min(2*wait, refusedRetryMax)
		t.Reset(wait)
	}
}

// status says why the record is held in memory only ("" when saved) and how many
// saves failed.
func (s *refusedSaver) status() (string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errMsg, s.failures
}
