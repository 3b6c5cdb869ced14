// Package framewriter is the module's one frame writer: the host's connection to an
// adapter, the adapter SDK and the control plane (daemon and client) all write their
// frames through a Writer. It owns what every writer of length-prefixed frames needs
// and what is easy to get subtly wrong: the queue of finished frames (headers and
// bodies, with large parts written by reference instead of copied), batching several
// frames into one Write, the writing turn (exactly one goroutine writes at a time; a
// producer that finds nobody writing writes itself, else the turn's holder writes its
// frame too), a write goroutine started only for frames nobody else writes and ended
// when idle, the bound on each Write (a write deadline, the caller's context, or a
// timer), and when a frame's borrowed memory is given back (see [Releaser]).
//
// There is one way in: a producer builds its frame in memory of its own (a pooled
// buffer, package bufpool), hands it to [Writer.Queue] with the runs it splices in by
// reference and what to release once they are written, then makes sure it is written:
// [Writer.Flush] in its own goroutine, or [Writer.Kick] for the write goroutine (or a
// non-blocking attempt first). No method returns with a lock held, and the writer's
// lock is a leaf: nothing the writer calls back (OnFail, OnStall, Release) runs under
// it, so a caller may queue while holding a lock of its own (the host's connection
// queues under its lock, so that frames go out in the order of their identities).
//
// Frames are built by the packages that know their envelopes (internal/proto); the
// writer never looks inside them.
package framewriter

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/internal/bufpool"
)

// Splice is a run of bytes that belongs at offset At of a text (a frame, or the queue)
// but was not copied into it: the text is written up to At, then Data, then on from
// At. Data is memory the writer borrows until the frame is written: it must not change
// before then.
type Splice struct {
	At   int
	Data []byte
}

// Releaser is what a queued frame borrows beyond the bytes copied into the queue (a
// pooled buffer, lent params). The writer calls Release exactly once per frame queued
// with one: after the Writes of the frame's batch have returned (also a failed one), or
// when the frame is dropped without being written (the writer was stopped, or a write
// failed first). Release runs in the goroutine that wrote or dropped the frame, with no
// lock of the writer held.
type Releaser interface{ Release() }

// Config configures a Writer. The zero Config writes without a bound on a Write,
// batches up to 64 KiB per Write and has no non-blocking attempt.
type Config struct {
	// Timeout bounds every Write: through a write deadline when the writer has one
	// (SetWriteDeadline), else through OnStall. 0: no bound.
	Timeout time.Duration
	// OnStall is called, from a timer, when a Write outlasted Timeout on a writer
	// without write deadlines; it must make the Write return (by closing the writer).
	OnStall func()
	// OnFail is called once with the first error of a Write, unless the writer was
	// stopped first; from the goroutine that met it, with no lock of the writer held.
	OnFail func(err error)
	// Batch is the most bytes of several frames one Write carries; a larger frame is
	// written by itself. 0 means 64 KiB.
	Batch int
	// CopyMax is the longest text [Writer.Queue] copies into the queue; a longer one,
	// and every part spliced in, is written from the caller's memory. 0 means 32 KiB.
	CopyMax int
	// Keep is the largest queue buffer kept between batches; a larger one goes back to
	// package bufpool. 0 means bufpool.SmallCap.
	Keep int
	// Try is the most bytes [Writer.Kick] writes with one non-blocking attempt in the
	// calling goroutine, when the output offers one (a pipe in non-blocking mode, Unix),
	// none of them by reference; 0 disables the attempt.
	Try int
	// Idle is how long the write goroutine waits for more to write before it ends; the
	// next [Writer.Kick] starts it again. 0 means one second.
	Idle time.Duration
	// MaxQueued bounds what [Writer.WaitRoom] lets queue up: it waits while more bytes
	// than this are queued and not yet taken by a writing turn. 0: no bound.
	MaxQueued int
}

// deadliner is a writer with write deadlines (os.File pipes, net.Conn).
type deadliner interface{ SetWriteDeadline(t time.Time) error }

// Writer writes frames to one io.Writer. Its methods are safe for concurrent use.
type Writer struct {
	out     io.Writer
	dw      deadliner // nil when out has no usable write deadline
	dlSet   bool      // a write deadline is set on dw (by the turn's holder only)
	stall   *time.Timer
	try     func(p []byte) (int, bool)
	timeout time.Duration
	onFail  func(error)
	batchN  int
	copyMax int
	keep    int
	tryMax  int
	idle    time.Duration
	maxQ    int

	wake chan struct{} // 1-buffered: something for the write goroutine to look at
	done chan struct{} // closed once the writer is over and nobody writes

	mu   sync.Mutex
	room sync.Cond // broadcast after each batch and when the writer ends
	q    queue     // frames not yet taken by a writing turn
	// spare is the last batch's arrays, for the next one.
	spare      queue
	queued     int         // bytes queued since a turn last took the queue
	writing    bool        // a goroutine holds the writing turn
	looping    bool        // the write goroutine runs
	loopOn     atomic.Bool // looping, for Kick's look without the lock (stored under mu)
	closing    bool        // Close: write what is queued, then end
	stopped    bool        // Stop: drop what is queued, end
	doneClosed bool
	err        error
	lost       []uint64 // tags of frames dropped after a failed Write, for Stop
}

// queue is frames in the order they are written: buf holds their copied bytes, the
// i-th frame ending at ends[i]; refs are borrowed runs spliced in at their offsets of
// buf (in order of At); rels what the frames borrow, given back after the write.
type queue struct {
	buf  []byte
	ends []int
	tags []uint64
	refs []Splice
	rels []Releaser
}

func (q *queue) reset() {
	clear(q.refs)
	clear(q.rels)
	q.buf, q.ends, q.tags, q.refs, q.rels = q.buf[:0], q.ends[:0], q.tags[:0], q.refs[:0], q.rels[:0]
}

// New returns a Writer of out configured by cfg. Nothing starts until a frame is
// queued and flushed or kicked.
func New(out io.Writer, cfg Config) *Writer {
	w := &Writer{
		out: out, timeout: cfg.Timeout, onFail: cfg.OnFail,
		batchN: cfg.Batch, copyMax: cfg.CopyMax, keep: cfg.Keep, tryMax: cfg.Try, idle: cfg.Idle, maxQ: cfg.MaxQueued,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	if w.batchN <= 0 {
		w.batchN = 64 << 10
	}
	if w.copyMax <= 0 {
		w.copyMax = 32 << 10
	}
	if w.keep <= 0 {
		w.keep = bufpool.SmallCap
	}
	if w.idle <= 0 {
		w.idle = time.Second
	}
	w.room.L = &w.mu
	if dw, ok := out.(deadliner); ok && dw.SetWriteDeadline(time.Time{}) == nil {
		w.dw = dw
	} else if cfg.Timeout > 0 && cfg.OnStall != nil {
		w.stall = time.AfterFunc(time.Hour, cfg.OnStall)
		w.stall.Stop()
	}
	if w.tryMax > 0 {
		w.try = nonblockingWriter(out)
	}
	return w
}

// push records the frame just added to the queue (under w.mu).
func (w *Writer) push(n int, tag uint64, rel Releaser) {
	w.q.ends = append(w.q.ends, len(w.q.buf))
	w.q.tags = append(w.q.tags, tag)
	if rel != nil {
		w.q.rels = append(w.q.rels, rel)
	}
	w.queued += n
}

// Queue queues one frame: text (header included) with parts spliced in (At an offset
// of text, in order), and reports true; it reports false, releasing rel, when the
// writer no longer takes frames. A text of at most CopyMax bytes is copied into the
// queue (the caller may reuse its memory once Queue returns), a longer one is written
// from the caller's memory; parts are always written from it. rel is released at once
// when nothing of the frame is written by reference, else once the frame is written or
// dropped. tag, if not 0, names the frame for [Writer.Stop].
func (w *Writer) Queue(text []byte, parts []Splice, tag uint64, rel Releaser) bool {
	w.mu.Lock()
	if w.stopped || w.closing || w.err != nil {
		w.mu.Unlock()
		if rel != nil {
			rel.Release()
		}
		return false
	}
	n := len(text)
	for _, p := range parts {
		n += len(p.Data)
	}
	at := len(w.q.buf)
	if len(text) <= w.copyMax {
		// Copied; parts (large params around which text is the envelope) are written
		// from the caller's memory at their offsets.
		w.q.buf = append(w.q.buf, text...)
		for _, p := range parts {
			w.q.refs = append(w.q.refs, Splice{At: at + p.At, Data: p.Data})
		}
	} else {
		from := 0
		for _, p := range parts {
			w.q.refs = append(w.q.refs, Splice{At: at, Data: text[from:p.At]}, Splice{At: at, Data: p.Data})
			from = p.At
		}
		w.q.refs = append(w.q.refs, Splice{At: at, Data: text[from:]})
	}
	if len(parts) == 0 && len(text) <= w.copyMax { // nothing borrowed
		w.push(n, tag, nil)
		w.mu.Unlock()
		if rel != nil {
			rel.Release()
		}
		return true
	}
	w.push(n, tag, rel)
	w.mu.Unlock()
	return true
}

// Flush writes what is queued in the calling goroutine, taking the writing turn,
// unless another goroutine holds it (that one then writes the frames queued before
// this call too). ctx bounds the Writes beside Timeout (an ended ctx stops a Write in
// progress, through the write deadline, when the writer has one). It returns the error
// of a failed Write this call made, or the writer's error when it has failed before.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if w.writing || w.stopped || w.err != nil || len(w.q.ends) == 0 {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.writing = true
	err, first := w.drain(ctx)
	w.endTurn()
	w.mu.Unlock()
	if first && w.onFail != nil {
		w.onFail(err)
	}
	return err
}

// tryFlush makes one non-blocking attempt to write what is queued in the calling
// goroutine, sparing the hand-off to the write goroutine: only when nobody holds the
// writing turn, the writer offers such attempts (w.try), and at most Try bytes are
// queued, none by reference. What the attempt did not write stays queued, in order, in
// front of what was queued meanwhile. It reports whether nothing is left for the write
// goroutine (written, written by the turn's holder, or the writer ended).
func (w *Writer) tryFlush() bool {
	w.mu.Lock()
	if w.writing || w.stopped || w.err != nil || len(w.q.ends) == 0 {
		w.mu.Unlock()
		return true
	}
	if w.queued > w.tryMax || len(w.q.refs) > 0 || len(w.q.rels) > 0 {
		w.mu.Unlock()
		return false
	}
	w.writing = true
	b := w.take()
	w.mu.Unlock()

	n, ok := w.try(b.buf)

	w.mu.Lock()
	defer w.mu.Unlock()
	if ok && n == len(b.buf) {
		w.recycle(b)
		left := len(w.q.ends) > 0
		w.endTurn()
		return !left
	}
	if !w.stopped {
		// The rest goes back in front of what was queued meanwhile (b's arrays are
		// not used again: the queue may share them no more).
		rest := queue{buf: b.buf[n:]}
		for _, e := range b.ends {
			if e > n {
				rest.ends = append(rest.ends, e-n)
				rest.tags = append(rest.tags, 0) // handed to a writer: no longer named
			}
		}
		if len(w.q.ends) > 0 {
			off := len(rest.buf)
			rest.buf = append(append(make([]byte, 0, off+len(w.q.buf)), rest.buf...), w.q.buf...)
			for i, e := range w.q.ends {
				rest.ends = append(rest.ends, off+e)
				rest.tags = append(rest.tags, w.q.tags[i])
			}
			for _, r := range w.q.refs {
				rest.refs = append(rest.refs, Splice{At: off + r.At, Data: r.Data})
			}
			rest.rels = append(rest.rels, w.q.rels...)
		} else {
			rest.buf = append([]byte(nil), rest.buf...)
		}
		w.q = rest
		w.queued = len(w.q.buf)
	}
	w.endTurn()
	return false
}

// Kick has what is queued written without blocking the caller: by one non-blocking
// attempt in the calling goroutine when the writer makes them (Config.Try) and nobody
// else writes, else (or for what the attempt left) by the write goroutine, started when
// none runs. A producer that must not block on the output (a reader) queues and kicks.
func (w *Writer) Kick() {
	if w.try != nil && w.tryFlush() {
		return // set once by New: a writer without attempts locks nothing here
	}
	if w.loopOn.Load() {
		// The goroutine runs: waking it is enough. It ends only after seeing, under
		// w.mu, an empty queue, which a frame queued before this call is not in.
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return
	}
	w.mu.Lock()
	if w.stopped || w.err != nil {
		w.mu.Unlock()
		return
	}
	w.startLoop()
	w.mu.Unlock()
}

// startLoop starts the write goroutine if none runs and wakes it (under w.mu).
func (w *Writer) startLoop() {
	if !w.looping {
		w.looping = true
		w.loopOn.Store(true)
		go w.loop()
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// loop is the write goroutine: it writes what producers leave to it, and ends when
// the writer is over, or when it was idle for Idle.
func (w *Writer) loop() {
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		var timedOut bool
		select {
		case <-w.wake:
		case <-idle.C:
			timedOut = true
		}
		w.mu.Lock()
		over := w.stopped || w.err != nil || (w.closing && len(w.q.ends) == 0)
		if !w.writing && (over || (timedOut && len(w.q.ends) == 0)) {
			w.looping = false
			w.loopOn.Store(false)
			w.settle()
			w.mu.Unlock()
			return
		}
		var err error
		first := false
		if !w.writing && len(w.q.ends) > 0 {
			w.writing = true
			err, first = w.drain(context.Background())
			w.endTurn()
		}
		w.mu.Unlock()
		if first && w.onFail != nil {
			w.onFail(err)
		}
		idle.Reset(w.idle) // no stale expiry is left to drain (timers since Go 1.23)
		if first {
			// The writer has failed: one more turn of the loop ends it.
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// endTurn gives the writing turn up (under w.mu), handing what is left to do to the
// write goroutine when the writer is closing or over.
func (w *Writer) endTurn() {
	w.writing = false
	w.settle()
}

// settle finishes the writer when it is over and nobody writes, or leaves that to the
// write goroutine (under w.mu).
func (w *Writer) settle() {
	if w.writing || w.doneClosed {
		return
	}
	over := w.stopped || w.err != nil
	if !over && !w.closing {
		return
	}
	if !over && len(w.q.ends) > 0 {
		w.startLoop() // closing: write what is left, then end
		return
	}
	if w.looping {
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return
	}
	w.doneClosed = true
	close(w.done)
	w.room.Broadcast()
}

// take hands the queue to the writing turn (under w.mu): the frames' tags are cleared,
// their outcome being uncertain from now on.
func (w *Writer) take() queue {
	b := w.q
	w.q, w.spare = w.spare, queue{}
	w.q.reset()
	w.queued = 0
	return b
}

// recycle keeps a written batch's arrays for the next one (under w.mu); a large buffer
// goes back to package bufpool instead.
func (w *Writer) recycle(b queue) {
	if cap(b.buf) > w.keep {
		big := b.buf
		bufpool.Put(&big)
		b.buf = nil
	}
	b.reset()
	if w.spare.ends == nil {
		w.spare = b
	}
}

// drain writes the queue until it is empty, holding the writing turn; it is called and
// returns with w.mu held, and releases it while writing. It returns the error of a
// failed Write, and whether it was the writer's first (the caller then calls onFail,
// after unlocking).
func (w *Writer) drain(ctx context.Context) (error, bool) {
	for w.err == nil && !w.stopped && len(w.q.ends) > 0 {
		b := w.take()
		w.mu.Unlock()
		err := w.writeBatch(ctx, b.buf, b.ends, b.refs)
		for _, r := range b.rels {
			r.Release()
		}
		w.mu.Lock()
		w.recycle(b)
		w.room.Broadcast()
		if err != nil {
			if w.stopped || w.err != nil {
				return err, false
			}
			w.err = err
			rels := w.drop()
			w.mu.Unlock()
			release(rels)
			w.mu.Lock()
			return err, true
		}
	}
	return w.err, false
}

// drop empties the queue of a writer that is over (under w.mu) and returns what its
// frames borrow, for the caller to release once it has unlocked; the tags of the
// frames dropped are kept for Stop.
func (w *Writer) drop() []Releaser {
	for _, t := range w.q.tags {
		if t != 0 {
			w.lost = append(w.lost, t)
		}
	}
	rels := w.q.rels
	w.q.rels = nil // the queue's next frames get an array of their own
	w.q.reset()
	w.queued = 0
	return rels
}

// release releases what dropped frames borrowed (with no lock of the writer held).
func release(rels []Releaser) {
	for _, r := range rels {
		r.Release()
	}
}

// WaitRoom blocks while more than MaxQueued bytes are queued and the writer still
// works, for at most timeout (0: no bound). It reports false when it gave up on the
// timeout: the output does not take what is written.
func (w *Writer) WaitRoom(timeout time.Duration) bool {
	if w.maxQ <= 0 {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queued <= w.maxQ {
		return true
	}
	expired := false
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			w.mu.Lock()
			expired = true
			w.room.Broadcast()
			w.mu.Unlock()
		})
		defer t.Stop()
	}
	for w.queued > w.maxQ && w.err == nil && !w.stopped && !w.closing {
		if expired {
			return false
		}
		w.room.Wait()
	}
	return true
}

// Close makes the writer write what is queued and then end ([Writer.Done] is closed
// then): it takes no more frames. It reports whether the writer was over at once
// (nothing queued, nobody writing).
func (w *Writer) Close() (flushed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closing = true
	w.settle()
	w.room.Broadcast()
	return w.doneClosed
}

// Stop ends the writer without writing what is queued: the frames are dropped (what
// they borrow released) and the tags of the named ones returned, in queue order, with
// those of the frames a failed Write left unwritten before — they were never handed to
// a Write. A Write in progress is not waited for (the caller
// closes the output to end it); [Writer.Done] is closed once it has returned.
func (w *Writer) Stop() []uint64 {
	w.mu.Lock()
	w.stopped = true
	if w.stall != nil {
		w.stall.Stop()
	}
	rels := w.drop()
	tags := w.lost
	w.lost = nil
	w.settle()
	w.room.Broadcast()
	w.mu.Unlock()
	release(rels)
	return tags
}

// Done returns a channel closed once the writer is over (closed and flushed, stopped,
// or failed: [Writer.Err] then says so) and no goroutine of it runs or writes.
func (w *Writer) Done() <-chan struct{} { return w.done }

// Err returns the first error of a Write, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
