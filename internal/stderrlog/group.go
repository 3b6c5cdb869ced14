package stderrlog

import (
	"bytes"
	"regexp"
	"time"
)

// Multi-line records: the consecutive lines of a panic or a traceback (a Go panic,
// fatal error or signal dump; a Python traceback; a Java "Exception in thread"; a Rust
// panic) make one record, whose message is the first line and whose field "stack"
// holds the others, each sanitized, joined by real newlines: go-hclog writes such a
// value in its multi-line format in text (each line after "  | ") and as one JSON string
// in JSON. A record ends at the first line that does not continue it, when standard
// error has been quiet for quietPeriod, or at Close; one that reaches maxRecord is cut
// there, marked and logged at once, and the rest of it is discarded until it ends.
const (
	// maxRecord bounds a multi-line record: its message and stack, in bytes.
	maxRecord = 64 << 10
	// recordTruncatedMarker is the last line of the stack of a record cut at maxRecord.
	recordTruncatedMarker = "[record truncated at 65536 bytes]"
	// quietPeriod is how long standard error stays quiet before a multi-line record
	// that has not ended is logged.
	quietPeriod = 100 * time.Millisecond
	// stackField is the field of a multi-line record that holds its lines after the
	// first.
	stackField = "stack"
)

// traceKind is the kind of a multi-line record, which decides what continues it.
type traceKind uint8

const (
	noTrace    traceKind = iota
	goTrace              // a Go panic, fatal error or signal dump
	pyTrace              // a Python traceback, before its exception line
	pyTraceEnd           // a Python traceback after its exception line
	javaTrace            // Exception in thread ...
	rustTrace            // thread '...' panicked at ...
)

const pyHead = "Traceback (most recent call last):"

var (
	// goFrame is a function line of a Go stack: main.(*T).m(0x1, {0x2, 0x3}).
	goFrame = regexp.MustCompile(`^[^\s(]+\(.*\)$`)
	// goRegister is a register line of a GOTRACEBACK=crash dump: rax    0x0.
	goRegister = regexp.MustCompile(`^[a-z0-9]+ +0x[0-9a-f]+$`)
)

// goSignal reports whether line begins a Go signal dump (SIGQUIT: quit) or the line
// of a fatal error's signal: "SIG", capitals or digits, ": ".
func goSignal(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("SIG"))
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && (rest[i] >= 'A' && rest[i] <= 'Z' || rest[i] >= '0' && rest[i] <= '9') {
		i++
	}
	return i > 0 && bytes.HasPrefix(rest[i:], []byte(": "))
}

// traceHead returns the kind of multi-line record line begins, or noTrace.
func traceHead(line []byte) traceKind {
	switch {
	case bytes.HasPrefix(line, []byte("panic: ")), bytes.HasPrefix(line, []byte("fatal error: ")), goSignal(line):
		return goTrace
	case string(line) == pyHead:
		return pyTrace
	case bytes.HasPrefix(line, []byte("Exception in thread ")):
		return javaTrace
	case bytes.HasPrefix(line, []byte("thread '")) && bytes.Contains(line, []byte("' panicked at ")):
		return rustTrace
	}
	return noTrace
}

// continues reports whether line (not blank) continues the record g, and updates
// g.kind for a Python traceback's end or chaining.
func (g *group) continues(line []byte) bool {
	indented := line[0] == ' ' || line[0] == '\t'
	has := func(p string) bool { return bytes.HasPrefix(line, []byte(p)) }
	switch g.kind {
	case goTrace:
		return indented || has("goroutine ") || has("created by ") || has("[") || has("panic: ") ||
			has("fatal error: ") || has("runtime stack:") || has("PC=") || has("...") ||
			goSignal(line) || goFrame.Match(line) || goRegister.Match(line)
	case pyTrace, javaTrace:
		switch {
		case string(line) == pyHead:
			g.kind = pyTrace
		case indented, g.kind == javaTrace && has("Caused by: "):
		case g.kind == pyTrace:
			g.kind = pyTraceEnd // the exception line ends it, but for chaining
		default:
			return false
		}
		return true
	case pyTraceEnd:
		switch {
		case string(line) == pyHead:
			g.kind = pyTrace
			return true
		case has("During handling of the above exception"), has("The above exception was the direct cause"):
			return true
		}
		return false
	case rustTrace:
		if !g.rustMsg { // the panic's message, on the line after its head
			g.rustMsg = true
			return true
		}
		return indented || has("note: ") || has("stack backtrace:")
	}
	return false
}

// group is the multi-line record being assembled (under Writer.wmu).
type group struct {
	kind    traceKind
	msg     string    // the first line, sanitized
	stack   []byte    // the following lines, sanitized, joined by '\n'
	blank   int       // blank lines since the last line added (trailing ones are dropped)
	cut     bool      // reached maxRecord: logged, the rest is discarded until it ends
	rustMsg bool      // rustTrace: the message line was taken
	last    time.Time // when its last line came
}

// size is how many bytes the record holds (0 for none).
func (g *group) size() int {
	if g == nil {
		return 0
	}
	return len(g.msg) + len(g.stack) + g.blank
}

// add appends line (blank or not) to the record; it reports false when the line
// would take it past maxRecord.
func (g *group) add(line []byte) bool {
	if len(line) == 0 {
		if len(g.stack) > 0 { // leading blank lines are dropped
			g.blank++
		}
		return g.size() < maxRecord
	}
	s := sanitize(line)
	if g.size()+1+len(s) > maxRecord {
		return false
	}
	if len(g.stack) > 0 {
		g.stack = append(g.stack, '\n')
	}
	for ; g.blank > 0; g.blank-- {
		g.stack = append(g.stack, '\n')
	}
	g.stack = append(g.stack, s...)
	return true
}

// record is the record of g, at level's.
func (g *group) record(w *Writer) logRecord {
	rec := logRecord{level: w.level, msg: g.msg, size: g.size() + 64}
	if g.cut {
		if len(g.stack) > 0 {
			g.stack = append(g.stack, '\n')
		}
		g.stack = append(g.stack, recordTruncatedMarker...)
	}
	if len(g.stack) > 0 {
		rec.args = []any{stackField, string(g.stack)}
	}
	return rec
}

// groupLine offers line, a whole line of standard error that is not blank or is, to
// the multi-line record being assembled or as the head of a new one (under wmu, when
// records are logged). It reports whether the line was taken.
func (w *Writer) groupLine(line []byte) bool {
	if g := w.group; g != nil {
		if len(line) == 0 || g.continues(line) {
			g.last = time.Now()
			if g.cut {
				return true // the rest of a cut record is discarded
			}
			if !g.add(line) {
				g.cut = true
				w.enqueue(g.record(w))
				g.stack = nil
			}
			return true
		}
		w.endGroup()
	}
	if len(line) == 0 {
		return false
	}
	kind := traceHead(line)
	if kind == noTrace {
		return false
	}
	if !w.allow() {
		w.drop()
		return true
	}
	w.group = &group{kind: kind, msg: sanitize(line), last: time.Now()}
	if w.quiet == nil {
		w.quiet = time.AfterFunc(quietPeriod, w.quietEnd)
	} else {
		w.quiet.Reset(quietPeriod)
	}
	return true
}

// endGroup logs the multi-line record being assembled, unless it was cut (and so
// logged already), and forgets it (under wmu).
func (w *Writer) endGroup() {
	g := w.group
	if g == nil {
		return
	}
	w.group = nil
	if !g.cut {
		w.enqueue(g.record(w))
	}
}

// quietEnd ends the multi-line record once standard error has been quiet for
// quietPeriod since its last line.
func (w *Writer) quietEnd() {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.group == nil {
		return
	}
	if d := time.Since(w.group.last); d < quietPeriod {
		w.quiet.Reset(quietPeriod - d)
		return
	}
	w.endGroup()
}
