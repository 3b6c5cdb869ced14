package plugin

import (
	"context"
	"io"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/framewriter"
)

// A connection's output is written by package framewriter, the module's one frame
// writer. Replies are built in a pooled buffer (package bufpool); a small one is
// copied into the writer's batch and its buffer goes back to the pool at once, a large
// one (or one with long strings spliced in) is written from its buffer without another
// copy, and the buffer goes back once written. Replies may be written in any order
// (R34).
//
// A handler goroutine whose reply finds nobody writing writes it (and whatever queued
// meanwhile) itself, sparing a goroutine hand-off on every call; otherwise, and for
// frames from the read loop, which must never block on the pipe, the writer's own
// goroutine writes them.
const (
	smallFrame     = 32 << 10 // frames up to this size are batched (copied)
	batchRetainCap = 1 << 20  // the batch buffer kept between writes
)

func getFrame() *[]byte { return bufpool.Get() }

// newWriter returns the writer of out: the reader waits (waitRoom) while more than
// maxQueue bytes are queued, so a host that floods requests without reading replies
// is slowed down instead of growing memory.
func newWriter(out io.Writer, maxQueue int) *framewriter.Writer {
	return framewriter.New(out, framewriter.Config{CopyMax: smallFrame, Keep: batchRetainCap, MaxQueued: maxQueue})
}

// reply queues a handler's reply frame, held in frame (a bufpool buffer, which the
// writer now owns), with parts spliced in (not copied; they must not change until
// written), and writes it in the calling goroutine when nobody else is writing. After
// a write error or close, the frame is dropped: the connection is over.
func (c *conn) reply(frame *[]byte, parts ...framewriter.Splice) {
	if c.w.Queue(*frame, parts, 0, (*bufpool.Buffer)(frame)) {
		_ = c.w.Flush(context.Background()) // an error is the writer's: Serve sees it end
	}
}

// enqueue hands a finished frame (a bufpool buffer, which the writer now owns) to the
// writer's goroutine: the read loop never writes itself.
func (c *conn) enqueue(frame *[]byte) {
	if c.w.Queue(*frame, nil, 0, (*bufpool.Buffer)(frame)) {
		c.w.Kick()
	}
}
