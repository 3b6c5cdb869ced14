package plugin

import (
	"io"
	"sync"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/validjson"
)

// Frame buffers come from package bufpool. Replies are built in a pooled buffer; small
// ones are copied into the writer's batch and the buffer goes back to the pool at once,
// large ones are handed to the writer whole, written without another copy, and then
// pooled apart for the next large reply.
const (
	smallFrame     = 32 << 10 // frames up to this size are batched
	batchRetainCap = 1 << 20  // the batch buffer kept between writes
)

func getFrame() *[]byte { return bufpool.Get() }

func putFrame(b *[]byte) { bufpool.Put(b) }

// writer owns a connection's output. Producers queue finished frames; frames are written
// one at a time, whole, by whoever holds the writing turn, with as few Write calls as
// possible, so replies are batched under load. Replies may be written in any order
// (R34).
//
// A handler goroutine whose reply finds nobody writing takes the turn and writes it
// (and whatever queued meanwhile) itself, sparing a goroutine hand-off on every call;
// otherwise, and for frames from the read loop, which must never block on the pipe, the
// writer's own goroutine writes them.
type writer struct {
	out      io.Writer
	maxQueue int // the reader waits while more bytes than this are queued

	mu        sync.Mutex
	work      sync.Cond // signalled when something is queued, a turn ends or the writer closes
	room      sync.Cond // broadcast after each write and on failure
	batch     []byte
	bigs      []bigFrame
	spare     []byte     // the last batch's buffer, for the next one
	spareBigs []bigFrame // likewise
	queued    int
	writing   bool // someone holds the writing turn
	looping   bool // the loop goroutine was started
	closing   bool
	err       error

	failed chan struct{} // closed on the first write error
	done   chan struct{} // closed when the write loop has returned
}

// bigFrame is a large frame written without copying: its buffer with parts spliced in
// (At an index of the buffer), which belong to the caller.
type bigFrame struct {
	buf   *[]byte
	parts []validjson.Splice
}

// newWriter returns a writer of out. Its goroutine starts with the first frame that
// needs it (see push): a connection whose replies are all written by their handlers,
// the common case, never starts it.
func newWriter(out io.Writer, maxQueue int) *writer {
	w := &writer{out: out, maxQueue: maxQueue, failed: make(chan struct{}), done: make(chan struct{})}
	w.work.L = &w.mu
	w.room.L = &w.mu
	return w
}

// enqueue hands a finished frame to the writer's goroutine. After a write error or
// close, frames are dropped: the connection is over.
func (w *writer) enqueue(frame *[]byte) { w.push(frame, nil, false) }

// reply queues a handler's reply frame, whose payload has parts spliced in (not copied;
// they must not change until written), and writes it in the calling goroutine when
// nobody else is writing.
func (w *writer) reply(frame *[]byte, parts ...validjson.Splice) { w.push(frame, parts, true) }

func (w *writer) push(frame *[]byte, parts []validjson.Splice, direct bool) {
	w.mu.Lock()
	if w.err != nil || w.closing {
		w.mu.Unlock()
		putFrame(frame)
		return
	}
	n := len(*frame)
	for _, p := range parts {
		n += len(p.Data)
	}
	w.queued += n
	small := len(parts) == 0 && n <= smallFrame
	if small {
		w.batch = append(w.batch, *frame...)
	} else {
		w.bigs = append(w.bigs, bigFrame{buf: frame, parts: parts})
	}
	if direct && !w.writing {
		w.writing = true
		w.drain()
		w.writing = false
	}
	if !w.looping && !direct {
		// A frame that nobody writes here and now (from the read loop, which must not
		// block on the pipe) is the loop's: start it, once.
		w.looping = true
		go w.loop()
	}
	w.work.Signal()
	w.mu.Unlock()
	if small {
		putFrame(frame)
	}
}

// drain writes everything queued, until nothing is, holding the writing turn. It is
// called and returns with w.mu held, and releases it while writing.
func (w *writer) drain() {
	for w.err == nil && (len(w.batch) > 0 || len(w.bigs) > 0) {
		batch, bigs := w.batch, w.bigs
		w.batch, w.bigs = w.spare[:0], w.spareBigs[:0]
		w.spare, w.spareBigs = nil, nil
		w.queued = 0
		w.mu.Unlock()

		err := w.write(batch)
		for i, b := range bigs {
			if err == nil {
				err = w.writeSpliced(*b.buf, b.parts)
			}
			putFrame(b.buf)
			bigs[i] = bigFrame{}
		}
		if cap(batch) > batchRetainCap {
			batch = nil
		}

		w.mu.Lock()
		w.spare, w.spareBigs = batch, bigs
		if err != nil {
			w.err = err
			w.batch, w.bigs = nil, nil
			close(w.failed)
		}
		w.room.Broadcast()
	}
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

// close makes the write loop return once everything queued is written (done is closed
// then; at once when the loop never started and nothing is left). It reports whether everything is written
// already (nothing queued, nobody writing): then there is nothing to wait for, and the
// loop returns on its own.
func (w *writer) close() (flushed bool) {
	w.mu.Lock()
	w.closing = true
	flushed = !w.writing && len(w.batch) == 0 && len(w.bigs) == 0
	if !w.looping {
		w.looping = true
		if flushed {
			close(w.done) // nothing was ever left to the loop, and nothing is now
		} else {
			go w.loop() // it waits for the turn held, writes what is left, and returns
		}
	}
	w.work.Signal()
	w.room.Broadcast()
	w.mu.Unlock()
	return flushed
}

// error returns the first write error, if any.
func (w *writer) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// loop writes what nobody else writes, and returns after a write error, or after close
// once everything queued is written and no turn is held.
func (w *writer) loop() {
	defer close(w.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		queued := len(w.batch) > 0 || len(w.bigs) > 0
		switch {
		case w.err != nil:
			return
		case w.writing:
			w.work.Wait() // a handler's turn; it signals when it ends
		case queued:
			w.writing = true
			w.drain()
			w.writing = false
		case w.closing:
			return
		default:
			w.work.Wait()
		}
	}
}

// writeSpliced writes text with parts spliced in, in order.
func (w *writer) writeSpliced(text []byte, parts []validjson.Splice) error {
	at := 0
	for _, p := range parts {
		if err := w.write(text[at:p.At]); err != nil {
			return err
		}
		if err := w.write(p.Data); err != nil {
			return err
		}
		at = p.At
	}
	return w.write(text[at:])
}

func (w *writer) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := w.out.Write(b)
	return err
}
