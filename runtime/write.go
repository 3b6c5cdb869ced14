package runtime

import (
	"errors"
	"fmt"
	"os"

	"github.com/adapterkit/adapterkit/wire"
)

// ErrWriteTimeout is the detail of an InputPipe violation when a frame was not written
// within the pipe write timeout.
var ErrWriteTimeout = errors.New("runtime: a frame was not written within the pipe write timeout")

// The connection's frames are written by package framewriter: a caller whose request
// finds nobody writing makes one non-blocking attempt to write it itself (up to
// directMax queued, Unix pipes), sparing the hand-off to the writer's goroutine; what
// it leaves, and every cancel, is the goroutine's, which ends when idle. Each Write
// must complete within the pipe write timeout (a deadline on the pipe, or a timer that
// ends the connection, which closes w and so unblocks the Write: R45, A36).
const (
	// batchLimit bounds one Write of several small frames. A single larger frame is
	// written by itself. It is also the most data the 10 s bound covers at once beyond
	// one frame.
	batchLimit = 64 << 10
	// directMax is the most a caller writes itself: what a pipe buffer usually takes
	// at once. A larger queue goes to the writer's goroutine without an attempt.
	directMax = 64 << 10
)

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
