package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// ErrWriteTimeout is the detail of an InputPipe violation when a frame was not written
// within the pipe write timeout.
var ErrWriteTimeout = errors.New("runtime: a frame was not written within the pipe write timeout")

// The connection's frames are written by package framewriter, built as the adapter SDK
// builds its replies: in a pooled buffer (package bufpool) that the writer copies into
// its batch and gives back at once (a frame up to directMax), or writes from and gives
// back once written (a larger one); the envelope around lent params is built in c.head
// and copied, the params written from the loan. They are queued under c.mu, so that they go out in
// the order of their identities (R33); the writer's lock is a leaf below it. After
// queueing, a caller whose request finds nobody writing makes one non-blocking attempt
// to write it itself (up to directMax queued, Unix pipes: Kick), sparing the hand-off to
// the writer's goroutine; what it leaves is the goroutine's, which ends when idle. Each
// Write must complete within the pipe write timeout (a deadline on the pipe, or a timer
// that ends the connection, which closes w and so unblocks the Write: R45, A36).
const (
	// batchLimit bounds one Write of several small frames. A single larger frame is
	// written by itself. It is also the most data the 10 s bound covers at once beyond
	// one frame.
	batchLimit = 64 << 10
	// directMax is the most a caller writes itself: what a pipe buffer usually takes
	// at once. A larger queue goes to the writer's goroutine without an attempt.
	directMax = 64 << 10
)

// newWriter returns the writer of the adapter's input w.
func (c *Conn) newWriter(w io.Writer) *framewriter.Writer {
	return framewriter.New(w, framewriter.Config{
		Timeout: c.pipeWrite, OnStall: c.writeStalled, OnFail: c.writeFailed,
		Batch: batchLimit, CopyMax: directMax, Try: directMax,
	})
}

// queueRequest builds the frame of request id and queues it (under c.mu, id being the
// next identity). Params larger than directMax that come with a loan are not copied:
// the frame is the envelope around them, copied into the writer's queue, and the
// params are written from the lent buffer, the loan held until they are written. A
// frame above the limit is refused with a *proto.FrameError, nothing held or queued;
// queued is false when the writer no longer takes frames.
func (c *Conn) queueRequest(id uint64, method string, params []byte, loan *handover.Lease) (queued bool, err error) {
	if loan != nil && len(params) > directMax {
		b := proto.AppendRequestHead(proto.BeginFrame(c.head[:0]), id, method)
		parts := [1]framewriter.Splice{{At: len(b), Data: params}}
		b = append(b, '}')
		if len(b) <= directMax { // the writer's CopyMax: it copies the envelope, c.head is free again on return
			c.head = b
			if _, err := proto.FinishSplicedFrame(b, len(params), c.frameMax); err != nil {
				return false, err
			}
			loan.Hold()
			return c.fw.Queue(b, parts[:], id, loan), nil
		}
	}
	buf := bufpool.Get()
	b := bufpool.Reserve((*buf)[:0], len(params)+len(method)+requestOverhead)
	b = proto.AppendRequest(proto.BeginFrame(b), id, method, params)
	*buf = b
	if _, err := proto.FinishFrame(b, c.frameMax); err != nil {
		bufpool.Put(buf)
		return false, err
	}
	return c.fw.Queue(b, nil, id, (*bufpool.Buffer)(buf)), nil // the writer releases buf
}

// queueCancel queues the cancel of request id (under c.mu); the caller kicks the
// writer once it has unlocked.
func (c *Conn) queueCancel(id uint64) {
	buf := bufpool.Get()
	b, err := proto.FinishFrame(proto.AppendCancel(proto.BeginFrame((*buf)[:0]), id), c.frameMax)
	if err != nil { // unreachable: a cancel is a few dozen bytes
		bufpool.Put(buf)
		return
	}
	*buf = b
	c.fw.Queue(b, nil, 0, (*bufpool.Buffer)(buf))
}

// writeStalled runs when a Write outlasted the pipe write timeout (timer path).
func (c *Conn) writeStalled() {
	c.end(violation(wire.InputPipe, fmt.Errorf("%w (%v)", ErrWriteTimeout, c.pipeWrite)))
}

// writeFailed ends the connection after a failed Write, unless the host ended it first
// (closing w is how a Write in progress is stopped). The writer calls it, with none of
// its locks held.
func (c *Conn) writeFailed(err error) {
	if c.ended() {
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.end(violation(wire.InputPipe, fmt.Errorf("%w (%v): %w", ErrWriteTimeout, c.pipeWrite, err)))
		return
	}
	if c.onPeerGone != nil {
		if cause := c.onPeerGone(); cause != nil {
			c.end(cause)
			return
		}
	}
	c.end(violation(wire.InputPipe, err))
}
