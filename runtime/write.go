package runtime

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/wire"
)

// ErrWriteTimeout is the detail of an InputPipe violation when a frame was not written
// within the pipe write timeout.
var ErrWriteTimeout = errors.New("runtime: a frame was not written within the pipe write timeout")

const (
	// batchLimit bounds one Write of several small frames. A single larger frame is
	// written by itself. Each Write must complete within the pipe write timeout, so
	// this is also the most data the 10 s bound covers at once beyond one frame.
	batchLimit = 64 << 10
	// keepBuffer is the largest write buffer a connection keeps between batches; a
	// larger one (after a big request) goes back to package bufpool, shared by every
	// connection of the process.
	keepBuffer = bufpool.SmallCap
)

// writerIdle is how long the write loop waits for more to write before it ends (a
// variable for tests). The next frame a caller cannot write itself starts it again
// (kick), so a connection pays for the goroutine only while its writes are busy.
var writerIdle = time.Second

// writeLoop writes the adapter's input. It takes every queued frame at once (frames
// queue up while a Write is in progress, so load batches them) and writes them in
// identity order, holding c.wmu while it writes. A caller whose request finds nobody
// writing may first try to write it itself, without blocking (writeNow); whatever that
// leaves is the loop's.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	idle := time.NewTimer(writerIdle)
	defer idle.Stop()
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		case <-idle.C:
			if c.retireWriter() {
				return
			}
		}
		c.wmu.Lock()
		ok := c.drainWrites()
		c.wmu.Unlock()
		if !ok {
			return
		}
		idle.Reset(writerIdle)
	}
}

// retireWriter ends the write loop if nothing is queued. It decides under c.mu, as
// enqueue queues and kick starts a loop: a frame queued before it is seen here (and
// written), one queued after it finds no loop and starts one.
func (c *Conn) retireWriter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.outEnds) > 0 {
		return false
	}
	c.writer.Store(false)
	return true
}

// drainWrites writes every queued frame, holding c.wmu. It reports false when the
// connection has ended.
func (c *Conn) drainWrites() bool {
	for {
		c.mu.Lock()
		if c.state == stateEnded {
			c.mu.Unlock()
			return false
		}
		buf, ends, lent := c.wbuf[:0], c.wends[:0], c.wlent[:0]
		buf, c.out = c.out, buf
		ends, c.outEnds = c.outEnds, ends
		lent, c.outLent = c.outLent, lent
		c.outIDs = c.outIDs[:0] // handed to the writer: their outcome is uncertain from now
		c.mu.Unlock()
		if len(ends) == 0 {
			c.wbuf, c.wends, c.wlent = buf, ends, lent
			return true
		}
		err := c.writeFrames(buf, ends, lent)
		// The Writes have returned (also a failed one): the lent buffers are free.
		for i, l := range lent {
			bufpool.Put(l.buf)
			lent[i] = lentParams{}
		}
		if err != nil {
			c.writeFailed(err)
			return false
		}
		c.keepWriteBuffers(buf, ends)
		c.wlent = lent[:0]
	}
}

// directMax is the most a caller writes itself (writeNow): what a pipe buffer usually
// takes at once. A larger queue goes to the write loop without an attempt.
const directMax = 64 << 10

// writeNow is a caller's attempt to write the queued frames at once, sparing the
// hand-off to the write loop: when nobody is writing and w takes a non-blocking write,
// it makes one attempt, which never waits for the pipe. What the pipe did not take is
// put back at the front of the queue, in order, and writeNow reports false: the caller
// then wakes the write loop, which writes it under the pipe write timeout.
func (c *Conn) writeNow() bool {
	if c.tryWrite == nil || !c.wmu.TryLock() {
		return false
	}
	defer c.wmu.Unlock()
	c.mu.Lock()
	if c.state == stateEnded || len(c.outEnds) == 0 {
		c.mu.Unlock()
		return true // ended, or the write loop took the frames already
	}
	if len(c.out) > directMax || len(c.outLent) > 0 {
		c.mu.Unlock()
		return false // more than a pipe takes at once: the loop's
	}
	buf, ends := c.wbuf[:0], c.wends[:0]
	buf, c.out = c.out, buf
	ends, c.outEnds = c.outEnds, ends
	c.outIDs = c.outIDs[:0] // handed to a writer: their outcome is uncertain from now
	c.mu.Unlock()

	n, ok := c.tryWrite(buf)
	if ok && n == len(buf) {
		c.keepWriteBuffers(buf, ends)
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateEnded {
		return true
	}
	// The rest of ours goes back in front of the frames queued meanwhile. (c.wbuf and
	// c.wends still name the arrays the queue took at the swap; once it moves off them
	// they are spares again.)
	rest := buf[n:]
	restEnds := ends[:0]
	for _, e := range ends {
		if e > n {
			restEnds = append(restEnds, e-n)
		}
	}
	if len(c.out) > 0 {
		for _, e := range c.outEnds {
			restEnds = append(restEnds, len(rest)+e)
		}
		for i := range c.outLent {
			c.outLent[i].at += len(rest)
		}
		rest = append(append(make([]byte, 0, len(rest)+len(c.out)), rest...), c.out...)
	}
	c.out, c.outEnds = rest, restEnds
	return false
}

// keepWriteBuffers keeps a written batch's buffers for the next one (under c.wmu); a
// large buffer goes back to package bufpool instead.
func (c *Conn) keepWriteBuffers(buf []byte, ends []int) {
	if cap(buf) > keepBuffer {
		big := buf
		bufpool.Put(&big)
		buf = nil
	}
	c.wbuf, c.wends = buf[:0], ends[:0]
}

// writeFrames writes the frames of buf (ending at the offsets ends), with the lent
// params spliced in at their offsets, in as few Writes as the batch limit allows: lent
// params are written by a Write of their own, from the caller's buffer.
func (c *Conn) writeFrames(buf []byte, ends []int, lent []lentParams) error {
	start := 0
	for i := 0; i < len(ends); {
		end := ends[i]
		i++
		for i < len(ends) && ends[i]-start <= batchLimit {
			end = ends[i]
			i++
		}
		for ; len(lent) > 0 && lent[0].at <= end; lent = lent[1:] {
			if err := c.writeTimed(buf[start:lent[0].at]); err != nil {
				return err
			}
			if err := c.writeTimed(lent[0].data); err != nil {
				return err
			}
			start = lent[0].at
		}
		if err := c.writeTimed(buf[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// writeTimed writes p within the pipe write timeout: with a write deadline when w has
// one, else with a timer that ends the connection, which closes w and so unblocks the
// Write (R45, A36).
func (c *Conn) writeTimed(p []byte) error {
	if c.dw != nil {
		if err := c.dw.SetWriteDeadline(time.Now().Add(c.pipeWrite)); err != nil {
			return err
		}
		_, err := c.w.Write(p)
		return err
	}
	c.wtimer.Reset(c.pipeWrite)
	_, err := c.w.Write(p)
	c.wtimer.Stop()
	return err
}

// writeStalled runs when a Write outlasted the pipe write timeout (timer path).
func (c *Conn) writeStalled() {
	c.end(violation(wire.InputPipe, fmt.Errorf("%w (%v)", ErrWriteTimeout, c.pipeWrite)))
}

// writeFailed ends the connection after a failed Write, unless the host ended it first
// (closing w is how a Write in progress is stopped).
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
