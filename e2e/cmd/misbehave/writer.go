package main

import (
	"os"
	"sync"
)

// hookWriter carries the adapter's frames to its stdout. after, if set, runs once right
// after the first write (the initialize reply) has reached the file; raw writes bytes
// that are not frames.
type hookWriter struct {
	mu    sync.Mutex
	f     *os.File
	after func(*os.File)
	done  bool
}

func (w *hookWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.f.Write(p)
	if err == nil && !w.done && w.after != nil {
		w.done = true
		w.after(w.f)
	}
	return n, err
}

func (w *hookWriter) raw(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(p)
}
