package runtime

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/adapterkit/adapterkit/internal/bufpool"
)

// ErrWriteTimeout is the detail of an InputPipe violation when a frame was not written
// within the pipe write timeout (R45, A36).
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

// writeLoop is the only writer to the adapter's input. It takes every queued frame at
// once (frames queue up while a Write is in progress, so load batches them) and writes
// them in identity order.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	var buf []byte
	var ends []int
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		for {
			c.mu.Lock()
			if c.state == stateEnded {
				c.mu.Unlock()
				return
			}
			buf, c.out = c.out, buf[:0]
			ends, c.outEnds = c.outEnds, ends[:0]
			c.outIDs = c.outIDs[:0] // handed to the writer: their outcome is uncertain from now
			c.mu.Unlock()
			if len(ends) == 0 {
				break
			}
			if err := c.writeFrames(buf, ends); err != nil {
				c.writeFailed(err)
				return
			}
			if cap(buf) > keepBuffer {
				big := buf
				bufpool.Put(&big)
				buf = nil
			}
		}
	}
}

// writeFrames writes the frames of buf (ending at the offsets ends) in as few Writes as
// the batch limit allows.
func (c *Conn) writeFrames(buf []byte, ends []int) error {
	start := 0
	for i := 0; i < len(ends); {
		end := ends[i]
		i++
		for i < len(ends) && ends[i]-start <= batchLimit {
			end = ends[i]
			i++
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
	c.end(NewViolation(InputPipe, fmt.Errorf("%w (%v)", ErrWriteTimeout, c.pipeWrite)))
}

// writeFailed ends the connection after a failed Write, unless the host ended it first
// (closing w is how a Write in progress is stopped).
func (c *Conn) writeFailed(err error) {
	if c.ended() {
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.end(NewViolation(InputPipe, fmt.Errorf("%w (%v): %w", ErrWriteTimeout, c.pipeWrite, err)))
		return
	}
	if c.onPeerGone != nil {
		if cause := c.onPeerGone(); cause != nil {
			c.end(cause)
			return
		}
	}
	c.end(NewViolation(InputPipe, err))
}
