package lifecycle

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// Bounds of the forwarding of an adapter's standard error to the host's logger.
const (
	// MaxLogLine is the longest standard error line forwarded as it is; a longer one is
	// cut there and marked (see [TruncatedMarker]); the rest of it is discarded.
	MaxLogLine = 64 << 10
	// TruncatedMarker ends a line that was cut at MaxLogLine.
	TruncatedMarker = " [line truncated at 65536 bytes]"
	// logQueueBytes bounds the lines parsed and waiting for the host's logger: beyond
	// it new lines are dropped (and counted) rather than block the adapter.
	logQueueBytes = 1 << 20
	// maxTailLine caps one line of the log tail kept for status reports.
	maxTailLine = 4 << 10
	// MaxLogRate is how many standard error lines of one adapter a second are logged
	// (with a burst of as many): beyond it lines are dropped and counted, so that a
	// flooding adapter costs the host a bounded share of its CPU.
	MaxLogRate = 10000
)

// LogWriter logs what is written to it as [Open] logs an adapter's standard error
// with Config.StderrLogger, for a host that starts adapter processes itself (give it
// as platform.Config.Stderr): line by line, hclog JSON records at their own level,
// other lines at a chosen level, with the same bounds (see [MaxLogLine]). Close it
// once the process has ended.
type LogWriter struct{ w *stderrLog }

// NewLogWriter returns a LogWriter logging through log, the adapter's sub-logger
// (named after the adapter, name): a JSON record whose @module is name is not given
// a module field. level is that of lines that are not JSON records (NoLevel: Debug).
func NewLogWriter(log hclog.Logger, name string, level hclog.Level) *LogWriter {
	w := newStderrLog(nil, log, level, name, nil)
	w.start(log)
	return &LogWriter{w: w}
}

// Write logs the complete lines of p; it never fails nor blocks on the logger.
func (l *LogWriter) Write(p []byte) (int, error) { return l.w.Write(p) }

// Close logs an unterminated last line and waits (a bounded time) until every
// record was handed to the logger.
func (l *LogWriter) Close() error {
	l.w.close()
	return nil
}

// logRecord is one line of standard error made into a log record.
type logRecord struct {
	level hclog.Level
	msg   string
	args  []any
	size  int
}

// stderrLog is the writer an adapter's standard error is copied into when the host
// routes it to a logger or keeps its tail. It never blocks on the host's logger: lines
// are parsed as they arrive and queued, up to logQueueBytes, for a drain goroutine
// (started when there is something to log, ending when there is not) that hands them
// to the logger; lines beyond the bound are dropped and counted, so the pipe is always
// drained and the host's memory bounded. Write never fails.
type stderrLog struct {
	raw   io.Writer   // Config.Stderr, the raw tee; nil for none
	level hclog.Level // of lines that are not hclog JSON records
	name  string      // the adapter's name: a record's @module equal to it is implied
	obs   *observed   // tail and dropped-line count (shared across restarts)

	wmu      sync.Mutex // the line being assembled; Write and close
	line     []byte
	skipping bool      // the current line passed MaxLogLine: its rest is discarded
	rawBad   bool      // the raw tee failed once: it is no longer written
	tokens   float64   // lines that may be logged now (MaxLogRate)
	refilled time.Time // when tokens was last refilled

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

// newStderrLog returns the writer for one adapter process. log is the adapter's
// sub-logger (nil when the host set none); records wait for start.
func newStderrLog(raw io.Writer, log hclog.Logger, level hclog.Level, name string, obs *observed) *stderrLog {
	if level == hclog.NoLevel {
		level = hclog.Debug
	}
	return &stderrLog{raw: raw, level: level, name: name, obs: obs, log: log, held: true}
}

// start releases the records held so far to log (the sub-logger with the process's
// pid), and logs the next ones as they come.
func (w *stderrLog) start(log hclog.Logger) {
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
func (w *stderrLog) Write(p []byte) (int, error) {
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
			room := MaxLogLine - len(w.line)
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
	if cap(w.line) > MaxLogLine && len(w.line) == 0 {
		w.line = nil // do not keep a large buffer after a long line
	}
	return len(p), nil
}

// close logs a last unterminated line and waits until every queued record was
// handed to the logger.
func (w *stderrLog) close() {
	w.wmu.Lock()
	if len(w.line) > 0 && !w.skipping {
		w.handle(w.line, false)
	}
	w.line, w.skipping = nil, false
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
func (w *stderrLog) handle(line []byte, truncated bool) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) == 0 && !truncated {
		return
	}
	if w.obs != nil && w.obs.tail != nil {
		t := line
		if len(t) > maxTailLine {
			t = t[:maxTailLine]
		}
		s := sanitize(t)
		if truncated || len(line) > maxTailLine {
			s += TruncatedMarker
		}
		w.obs.tail.add(s)
	}
	w.mu.Lock()
	logging := w.log != nil
	w.mu.Unlock()
	if !logging {
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
			rec.msg += TruncatedMarker
		}
	}
	rec.size = len(line) + 64
	w.enqueue(rec)
}

// allow takes a token of the MaxLogRate bucket (under wmu).
func (w *stderrLog) allow() bool {
	now := time.Now()
	if w.refilled.IsZero() {
		w.tokens = MaxLogRate
	} else {
		w.tokens = min(MaxLogRate, w.tokens+now.Sub(w.refilled).Seconds()*MaxLogRate)
	}
	w.refilled = now
	if w.tokens < 1 {
		return false
	}
	w.tokens--
	return true
}

// drop counts a line that is not logged.
func (w *stderrLog) drop() {
	w.mu.Lock()
	w.dropped++
	w.kickLocked()
	w.mu.Unlock()
	if w.obs != nil {
		w.obs.droppedLines.Add(1)
	}
}

func (w *stderrLog) enqueue(rec logRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queued+rec.size > logQueueBytes {
		w.dropped++
		if w.obs != nil {
			w.obs.droppedLines.Add(1)
		}
		return
	}
	w.queue = append(w.queue, rec)
	w.queued += rec.size
	w.kickLocked()
}

// reportDueLocked says whether dropped lines are to be reported now.
func (w *stderrLog) reportDueLocked() bool {
	return w.dropped > 0 && (w.closing || time.Since(w.reported) >= time.Second)
}

// kickLocked starts the drain goroutine when records wait and none runs.
func (w *stderrLog) kickLocked() {
	if w.draining || w.held || (len(w.queue) == 0 && !w.reportDueLocked()) || w.log == nil {
		return
	}
	w.draining = true
	w.drains.Add(1)
	go w.drain()
}

func (w *stderrLog) drain() {
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

// parseRecord reads line as an hclog JSON record ({"@level":..., "@message":...,
// fields...}). Fields are sorted by key; "@"-keys other than @module are dropped
// (the host stamps its own time); @module, when it is not the adapter's own name, is
// kept as the field "module". Every string is sanitized.
func parseRecord(line []byte, name string, rec *logRecord) bool {
	if len(line) < 2 || line[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || dec.More() {
		return false
	}
	lvl, ok1 := m["@level"].(string)
	msg, ok2 := m["@message"].(string)
	if !ok1 || !ok2 {
		return false
	}
	level := hclog.LevelFromString(lvl)
	if level == hclog.NoLevel || level == hclog.Off {
		return false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, "@") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	args := make([]any, 0, 2*len(keys)+2)
	if mod, ok := m["@module"].(string); ok && mod != "" && mod != name {
		args = append(args, "module", sanitizeString(mod))
	}
	for _, k := range keys {
		args = append(args, sanitizeString(k), fieldValue(m[k]))
	}
	*rec = logRecord{level: level, msg: sanitizeString(msg), args: args}
	return true
}

// fieldValue makes a decoded JSON value safe to log: strings sanitized, numbers and
// booleans as they are, objects and arrays as compact JSON.
func fieldValue(v any) any {
	switch v := v.(type) {
	case string:
		return sanitizeString(v)
	case json.Number:
		return string(v)
	case bool:
		return v
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return sanitize(b)
}

func sanitizeString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			return sanitize([]byte(s))
		}
	}
	return s
}

// sanitize returns b as text that cannot break a log line or forge one: control
// characters (C0 but tab, DEL, C1, the line and paragraph separators) are written as
// \xNN or \uNNNN escapes and bytes that are not UTF-8 as \xNN.
func sanitize(b []byte) string {
	clean := true
	for _, c := range b {
		if c < 0x20 && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteString(`\x`)
			sb.WriteString(hex2(b[0]))
		case r < 0x20 && r != '\t' || r == 0x7f:
			sb.WriteString(`\x`)
			sb.WriteString(hex2(byte(r)))
		case r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029:
			sb.WriteString(`\u`)
			s := strconv.FormatInt(int64(r), 16)
			sb.WriteString(strings.Repeat("0", 4-len(s)) + s)
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// logTail keeps the last lines of an adapter's standard error.
type logTail struct {
	mu    sync.Mutex
	lines []string // ring
	next  int
	full  bool
	count atomic.Uint64
}

func newLogTail(n int) *logTail { return &logTail{lines: make([]string, n)} }

func (t *logTail) add(s string) {
	t.count.Add(1)
	t.mu.Lock()
	t.lines[t.next] = s
	t.next++
	if t.next == len(t.lines) {
		t.next, t.full = 0, true
	}
	t.mu.Unlock()
}

// snapshot returns the lines kept, oldest first.
func (t *logTail) snapshot() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		return append([]string(nil), t.lines[:t.next]...)
	}
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}
