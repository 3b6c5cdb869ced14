package stderrlog

import "sync"

// Tail keeps the last lines of an adapter's standard error (a [Sink]'s). It is safe
// for concurrent use.
type Tail struct {
	mu    sync.Mutex
	lines []string // ring
	next  int
	full  bool
}

// NewTail returns a Tail of the last n lines (n > 0).
func NewTail(n int) *Tail { return &Tail{lines: make([]string, n)} }

func (t *Tail) add(s string) {
	t.mu.Lock()
	t.lines[t.next] = s
	t.next++
	if t.next == len(t.lines) {
		t.next, t.full = 0, true
	}
	t.mu.Unlock()
}

// Lines returns the lines kept, oldest first (none for a nil Tail).
func (t *Tail) Lines() []string {
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
