// Package stderrlog makes an adapter's standard error into records of the host's
// logger: line by line, hclog JSON records at their own level with their fields,
// other lines at a chosen level, the lines of a panic or traceback as one record
// (group.go), every string sanitized so that no line can forge another or reach the
// terminal's control sequences. It never blocks the pipe it
// drains: lines beyond the bounds (64 KiB a line, 10000 lines a second, 1 MiB
// queued) are cut or dropped and counted. Package lifecycle routes each adapter's
// standard error through it; adapterctl check uses it for the processes it starts
// itself.
//
// It is in the module's shared layer (internal/) and imports no package of the module:
// two layers, lifecycle and adapterctl, use it.
package stderrlog

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Bounds of the forwarding of an adapter's standard error to the host's logger.
const (
	// maxLogLine is the longest standard error line forwarded as it is; a longer one is
	// cut there and marked (see truncatedMarker); the rest of it is discarded.
	maxLogLine = 64 << 10
	// truncatedMarker ends a line that was cut at maxLogLine.
	truncatedMarker = " [line truncated at 65536 bytes]"
	// logQueueBytes bounds the lines parsed and waiting for the host's logger: beyond
	// it new lines are dropped (and counted) rather than block the adapter.
	logQueueBytes = 1 << 20
	// maxTailLine caps one line of the log tail kept for status reports.
	maxTailLine = 4 << 10
	// maxLogRate is how many standard error lines of one adapter a second are logged
	// (with a burst of as many): beyond it lines are dropped and counted, so that a
	// flooding adapter costs the host a bounded share of its CPU.
	maxLogRate = 10000
)

// Sink receives what a Writer sees besides the records it logs; a nil field is not
// kept.
type Sink struct {
	// Tail keeps the last lines, sanitized and cut to 4 KiB.
	Tail *Tail
	// Dropped counts the lines not logged (over the rate or the queue bound).
	Dropped *atomic.Uint64
}

// logRecord is one line of standard error made into a log record.
type logRecord struct {
	level hclog.Level
	msg   string
	args  []any
	size  int
}

// Writer is what an adapter's standard error is copied into when the host routes it
// to a logger or keeps its tail. It never blocks on the host's logger: lines
// are parsed as they arrive and queued, up to logQueueBytes, for a drain goroutine
// (started when there is something to log, ending when there is not) that hands them
// to the logger; lines beyond the bound are dropped and counted, so the pipe is always
// drained and the host's memory bounded. Write never fails.
type Writer struct {
	raw   io.Writer   // Config.Stderr, the raw tee; nil for none
	level hclog.Level // of lines that are not hclog JSON records
	name  string      // the adapter's name: a record's @module equal to it is implied
	sink  Sink        // tail and dropped-line count (shared across restarts)

	wmu      sync.Mutex // the line being assembled; Write and close
	line     []byte
	skipping bool        // the current line passed maxLogLine: its rest is discarded
	rawBad   bool        // the raw tee failed once: it is no longer written
	tokens   float64     // lines that may be logged now (maxLogRate)
	refilled time.Time   // when tokens was last refilled
	group    *group      // the multi-line record being assembled (group.go)
	quiet    *time.Timer // ends group after quietPeriod; nil until the first

	mu       sync.Mutex
	log      hclog.Logger // nil: records are not logged (tail only)
	held     bool         // records wait until start gives the logger its pid
	queue    []logRecord
	queued   int
	dropped  uint64    // since the last report
	reported time.Time // of dropped lines, at most once a second
	closing  bool      // close reports what was dropped at once
	draining bool
	drains   sync.WaitGroup
}

// New returns the writer for one adapter process. raw, when not nil, receives every
// byte as written (a failing raw is no longer written). log is the adapter's
// sub-logger (nil: lines are only kept in the sink); a JSON record whose @module is
// name is not given a module field. level is that of lines that are not JSON
// records (NoLevel: Debug). Records wait until [Writer.Start].
func New(raw io.Writer, log hclog.Logger, level hclog.Level, name string, sink Sink) *Writer {
	if level == hclog.NoLevel {
		level = hclog.Debug
	}
	return &Writer{raw: raw, level: level, name: name, sink: sink, log: log, held: true}
}

// Start releases the records held so far to log (the sub-logger with the process's
// pid), and logs the next ones as they come.
func (w *Writer) Start(log hclog.Logger) {
	w.mu.Lock()
	if w.log != nil {
		w.log = log
	}
	w.held = false
	w.kickLocked()
	w.mu.Unlock()
}

// Write takes the next bytes of standard error. It always reports success, so that
// the copy from the pipe never stops.
func (w *Writer) Write(p []byte) (int, error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.raw != nil && !w.rawBad {
		if _, err := w.raw.Write(p); err != nil {
			w.rawBad = true
		}
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if !w.skipping {
			room := maxLogLine - len(w.line)
			if len(chunk) > room {
				w.line = append(w.line, chunk[:room]...)
				w.handle(w.line, true)
				w.line = w.line[:0]
				w.skipping = true
			} else {
				w.line = append(w.line, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !w.skipping {
			w.handle(w.line, false)
		}
		w.line, w.skipping = w.line[:0], false
		rest = rest[i+1:]
	}
	if cap(w.line) > maxLogLine && len(w.line) == 0 {
		w.line = nil // do not keep a large buffer after a long line
	}
	return len(p), nil
}

// Close logs a last unterminated line and waits (at most 2 s: the end of an adapter
// does not wait for a blocked host logger) until every queued record was handed to
// the logger.
func (w *Writer) Close() {
	w.wmu.Lock()
	if len(w.line) > 0 && !w.skipping {
		w.handle(w.line, false)
	}
	w.line, w.skipping = nil, false
	w.endGroup()
	if w.quiet != nil {
		w.quiet.Stop()
	}
	w.wmu.Unlock()
	w.mu.Lock()
	w.held, w.closing = false, true
	w.kickLocked()
	w.mu.Unlock()
	done := make(chan struct{})
	go func() {
		w.drains.Wait()
		close(done)
	}()
	t := time.NewTimer(closeLogWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		// The host's log output blocks: the drain goroutine stays with it, and ends
		// when it returns; the adapter's end does not wait for the host's logger.
	}
}

// closeLogWait bounds how long the end of an adapter waits for its last records to
// be handed to the host's logger.
const closeLogWait = 2 * time.Second

// handle makes one line (without its newline) into a record.
func (w *Writer) handle(line []byte, truncated bool) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if w.sink.Tail != nil && (len(line) > 0 || truncated) {
		t := line
		if len(t) > maxTailLine {
			t = t[:maxTailLine]
		}
		s := sanitize(t)
		if truncated || len(line) > maxTailLine {
			s += truncatedMarker
		}
		w.sink.Tail.add(s)
	}
	w.mu.Lock()
	logging := w.log != nil
	w.mu.Unlock()
	if !logging {
		return
	}
	if truncated {
		w.endGroup() // a cut line is a record of its own
	} else if w.groupLine(line) || len(line) == 0 {
		return
	}
	if !w.allow() {
		w.drop()
		return
	}
	var rec logRecord
	if truncated || !parseRecord(line, w.name, &rec) {
		rec = logRecord{level: w.level, msg: sanitize(line)}
		if truncated {
			rec.msg += truncatedMarker
		}
	}
	rec.size = len(line) + 64
	w.enqueue(rec)
}

// allow takes a token of the maxLogRate bucket (under wmu).
func (w *Writer) allow() bool {
	now := time.Now()
	if w.refilled.IsZero() {
		w.tokens = maxLogRate
	} else {
		w.tokens = min(maxLogRate, w.tokens+now.Sub(w.refilled).Seconds()*maxLogRate)
	}
	w.refilled = now
	if w.tokens < 1 {
		return false
	}
	w.tokens--
	return true
}

// drop counts a line that is not logged.
func (w *Writer) drop() {
	w.mu.Lock()
	w.dropped++
	w.kickLocked()
	w.mu.Unlock()
	if w.sink.Dropped != nil {
		w.sink.Dropped.Add(1)
	}
}

func (w *Writer) enqueue(rec logRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queued+rec.size > logQueueBytes {
		w.dropped++
		if w.sink.Dropped != nil {
			w.sink.Dropped.Add(1)
		}
		return
	}
	w.queue = append(w.queue, rec)
	w.queued += rec.size
	w.kickLocked()
}

// reportDueLocked says whether dropped lines are to be reported now.
func (w *Writer) reportDueLocked() bool {
	return w.dropped > 0 && (w.closing || time.Since(w.reported) >= time.Second)
}

// kickLocked starts the drain goroutine when records wait and none runs.
func (w *Writer) kickLocked() {
	if w.draining || w.held || (len(w.queue) == 0 && !w.reportDueLocked()) || w.log == nil {
		return
	}
	w.draining = true
	w.drains.Add(1)
	go w.drain()
}

func (w *Writer) drain() {
	defer w.drains.Done()
	var batch []logRecord
	for {
		w.mu.Lock()
		report := w.reportDueLocked()
		if len(w.queue) == 0 && !report {
			w.draining = false
			w.mu.Unlock()
			return
		}
		batch, w.queue = w.queue, batch[:0]
		var dropped uint64
		if report {
			dropped, w.dropped, w.reported = w.dropped, 0, time.Now()
		}
		log := w.log
		w.queued = 0
		w.mu.Unlock()
		if dropped > 0 {
			log.Warn("standard error lines dropped: more than 10000 a second, or the host's log output does not keep up", "dropped", dropped)
		}
		for i := range batch {
			log.Log(batch[i].level, batch[i].msg, batch[i].args...)
			batch[i] = logRecord{}
		}
	}
}
