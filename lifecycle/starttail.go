package lifecycle

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Bounds of what a failed handshake reports of the adapter's standard error.
const (
	startTailBytes = 4 << 10 // the last bytes kept while the handshake runs
	startTailLines = 5       // the last lines reported
	startTailLine  = 240     // bytes of one line reported; longer lines are cut
)

// startTail keeps the last bytes an adapter writes to standard error while its
// handshake runs, so that an adapter that exits before it answers initialize is
// reported with what it said ("/usr/bin/env: 'node': No such file or directory"
// instead of "exit status 127"). Every write also goes on to next (Config.Stderr or
// the stderr log; nil: nowhere else); once the handshake is over nothing more is kept.
type startTail struct {
	next io.Writer
	done atomic.Bool
	mu   sync.Mutex
	buf  []byte
}

func (w *startTail) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.mu.Lock()
		if len(p) >= startTailBytes {
			w.buf = append(w.buf[:0], p[len(p)-startTailBytes:]...)
		} else {
			if over := len(w.buf) + len(p) - startTailBytes; over > 0 {
				w.buf = w.buf[:copy(w.buf, w.buf[over:])]
			}
			w.buf = append(w.buf, p...)
		}
		w.mu.Unlock()
	}
	if w.next == nil {
		return len(p), nil
	}
	return w.next.Write(p)
}

// stop ends the keeping: the handshake succeeded.
func (w *startTail) stop() {
	w.done.Store(true)
	w.mu.Lock()
	w.buf = nil
	w.mu.Unlock()
}

// lines returns the last non-empty lines kept, oldest first, each quoted (control
// characters and invalid UTF-8 escaped) and cut to startTailLine bytes.
func (w *startTail) lines() []string {
	w.mu.Lock()
	buf := bytes.Clone(w.buf)
	w.mu.Unlock()
	var out []string
	for _, l := range bytes.Split(buf, []byte("\n")) {
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		cut := len(l) > startTailLine
		if cut {
			l = l[:startTailLine] // a rune cut in two is escaped like any invalid byte
		}
		s := strconv.Quote(string(l))
		if cut {
			s += "…"
		}
		out = append(out, s)
	}
	if len(out) > startTailLines {
		out = out[len(out)-startTailLines:]
	}
	return out
}
