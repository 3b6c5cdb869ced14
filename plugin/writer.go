package plugin

import (
	"io"
	"sync"
)

// Frame buffers. Replies are built in a pooled buffer; small ones are copied into the
// writer's batch and the buffer goes back to the pool at once, large ones are handed to
// the writer whole and written without another copy.
const (
	smallFrame     = 32 << 10 // frames up to this size are batched
	pooledFrameCap = 64 << 10 // larger buffers are left to the garbage collector
	batchRetainCap = 1 << 20  // the batch buffer kept between writes
)

var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getFrame() *[]byte { return frameBufs.Get().(*[]byte) }

func putFrame(b *[]byte) {
	if cap(*b) <= pooledFrameCap {
		*b = (*b)[:0]
		frameBufs.Put(b)
	}
}

// writer is the single writer of a connection's output. Producers enqueue finished
// frames and never block on the pipe; one goroutine writes everything queued since its
// last write with as few Write calls as possible, so replies are batched under load.
// Replies may be written in any order (R34).
type writer struct {
	out      io.Writer
	maxQueue int // the reader waits while more bytes than this are queued

	mu      sync.Mutex
	work    sync.Cond // signalled when something is queued or the writer closes
	room    sync.Cond // broadcast after each write and on failure
	batch   []byte
	bigs    []bigFrame
	queued  int
	closing bool
	err     error

	failed chan struct{} // closed on the first write error
	done   chan struct{} // closed when the write loop has returned
}

// bigFrame is a large frame written without copying: its buffer, then the parts that
// follow it (a large value and its closing brace), which belong to the caller.
type bigFrame struct {
	buf   *[]byte
	parts [][]byte
}

func newWriter(out io.Writer, maxQueue int) *writer {
	w := &writer{out: out, maxQueue: maxQueue, failed: make(chan struct{}), done: make(chan struct{})}
	w.work.L = &w.mu
	w.room.L = &w.mu
	go w.loop()
	return w
}

// enqueue hands a finished frame to the writer. After a write error or close, frames
// are dropped: the connection is over.
func (w *writer) enqueue(frame *[]byte) {
	w.mu.Lock()
	if w.err != nil || w.closing {
		w.mu.Unlock()
		putFrame(frame)
		return
	}
	n := len(*frame)
	w.queued += n
	if n <= smallFrame {
		w.batch = append(w.batch, *frame...)
		w.work.Signal()
		w.mu.Unlock()
		putFrame(frame)
		return
	}
	w.bigs = append(w.bigs, bigFrame{buf: frame})
	w.work.Signal()
	w.mu.Unlock()
}

// enqueueSplit hands the writer a frame whose payload continues with parts (not
// copied; they must not change until written).
func (w *writer) enqueueSplit(frame *[]byte, parts ...[]byte) {
	w.mu.Lock()
	if w.err != nil || w.closing {
		w.mu.Unlock()
		putFrame(frame)
		return
	}
	w.queued += len(*frame)
	for _, p := range parts {
		w.queued += len(p)
	}
	w.bigs = append(w.bigs, bigFrame{buf: frame, parts: parts})
	w.work.Signal()
	w.mu.Unlock()
}

// waitRoom blocks while the queue is over its bound and the writer still works: a host
// that floods requests without reading replies is slowed down instead of growing memory.
func (w *writer) waitRoom() {
	w.mu.Lock()
	for w.queued > w.maxQueue && w.err == nil && !w.closing {
		w.room.Wait()
	}
	w.mu.Unlock()
}

// close makes the write loop return once everything queued is written.
func (w *writer) close() {
	w.mu.Lock()
	w.closing = true
	w.work.Signal()
	w.room.Broadcast()
	w.mu.Unlock()
}

// error returns the first write error, if any.
func (w *writer) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *writer) loop() {
	defer close(w.done)
	var spare []byte
	var spareBigs []bigFrame
	for {
		w.mu.Lock()
		for len(w.batch) == 0 && len(w.bigs) == 0 && !w.closing {
			w.work.Wait()
		}
		if len(w.batch) == 0 && len(w.bigs) == 0 {
			w.mu.Unlock()
			return
		}
		batch, bigs := w.batch, w.bigs
		w.batch, w.bigs = spare[:0], spareBigs[:0]
		w.queued = 0
		w.mu.Unlock()

		err := w.write(batch)
		for i, b := range bigs {
			if err == nil {
				err = w.write(*b.buf)
			}
			for _, p := range b.parts {
				if err == nil {
					err = w.write(p)
				}
			}
			putFrame(b.buf)
			bigs[i] = bigFrame{}
		}
		spare, spareBigs = batch, bigs
		if cap(spare) > batchRetainCap {
			spare = nil
		}

		w.mu.Lock()
		if err != nil {
			w.err = err
			w.batch, w.bigs = nil, nil
			close(w.failed)
		}
		w.room.Broadcast()
		w.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (w *writer) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := w.out.Write(b)
	return err
}
