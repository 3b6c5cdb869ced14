package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// Reading the adapter's output: one reader at a time, handed over explicitly.
//
// Whoever holds the reader role (under Conn.mu) is the only goroutine that reads the
// output, so frames are taken whole and in order, and a violation is seen once. When the
// output has read deadlines (an *os.File pipe on Unix, as package lifecycle gives it), a
// caller that finds the role free takes it and reads until its own reply arrives,
// handing the other callers their replies: a lone caller is then woken by its reply
// itself, not by a goroutine that read it first, which on a machine with idle processors
// costs a good part of the round trip. When it has its reply it passes the role to the
// connection's own reader goroutine (readLoop) if other calls are in flight, which then
// reads until none is, as it always does without read deadlines (under load one
// goroutine reads on, with no hand-over per reply). With nothing in flight the role
// stays free for watchAfter, for the next call; then readLoop takes it and watches the
// idle output for its end. A reading caller whose context ends is interrupted by a
// passed read deadline, which the frame reader survives (it keeps a frame it was in for
// the next reader), and passes the role on.

// watchAfter is how long the reader role may stay free, with nothing in flight, before
// the connection's own reader starts to watch the output (a variable for tests). Calls
// made one after the other take the role in turn without it; an idle connection sees
// the adapter's end of output at most this much later than while a call reads.
var watchAfter = time.Millisecond

// roleHolder says who holds the reader role.
type roleHolder uint8

const (
	roleLoop   roleHolder = iota // the connection's reader goroutine, readLoop
	roleCaller                   // a caller, readRole.caller
	roleFree                     // nobody: the next caller, or readLoop after watchAfter
)

// readDeadliner is an output with read deadlines, such as an *os.File pipe.
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// readRole is the reading state of a connection; its fields but rd are under Conn.mu.
type readRole struct {
	rd     *proto.Reader // the output's frames; used only by the role's holder
	dl     readDeadliner // nil: callers never read (the output has no read deadlines)
	holder roleHolder
	caller *call       // the reading caller, when holder is roleCaller
	stint  uint64      // counts changes of holder: an interrupt meant for an earlier one is ignored
	watch  *time.Timer // starts readLoop once the role has stayed free for watchAfter
}

// longAgo is a read deadline that has passed: it stops a Read in progress.
var longAgo = time.Unix(1, 0)

// startReading sets up the reader role and starts readLoop, which holds it first: it
// watches the output until it has delivered a reply and nothing is in flight.
func (c *Conn) startReading() {
	c.rl.rd = proto.NewReader(c.r, c.frameMax)
	if d, ok := c.r.(readDeadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		c.rl.dl = d
		c.rl.watch = time.AfterFunc(time.Hour, c.watchIfFree)
		c.rl.watch.Stop()
	}
	c.rl.holder = roleLoop
	c.wg.Add(1)
	go c.readLoop()
}

// readLoop reads the output while it holds the reader role: it routes each reply to its
// caller and ends the connection on the first violation. With read deadlines it leaves
// the role as soon as nothing is in flight (see passRole); without, it reads until the
// connection ends.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	for {
		p, err := c.rl.rd.ReadFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			c.end(violation(wire.InvalidResponse, err)) // R54
			return
		}
		if _, st := c.deliver(&m, nil); st != readOn {
			return
		}
	}
}

// watchIfFree runs when the role has stayed free for watchAfter: readLoop takes it, in
// this goroutine.
func (c *Conn) watchIfFree() {
	c.mu.Lock()
	if c.state == stateEnded || c.rl.holder != roleFree {
		c.mu.Unlock()
		return
	}
	c.takeForLoop()
	c.mu.Unlock()
	c.readLoop()
}

// takeForLoop gives the role to readLoop, which reads without a deadline (under c.mu,
// with the connection not ended; the caller then runs readLoop).
func (c *Conn) takeForLoop() {
	c.rl.holder, c.rl.caller = roleLoop, nil
	c.rl.stint++
	_ = c.rl.dl.SetReadDeadline(time.Time{})
	c.wg.Add(1) // under c.mu, before end: Close's wait sees this goroutine counted
}

// passRole hands the reader role on, under c.mu, when its holder leaves it: to readLoop
// while calls are in flight (under load it then reads on, as callers come and go, with
// no hand-over per reply), else to nobody, until watchAfter passes or a caller takes
// it.
func (c *Conn) passRole() {
	c.rl.stint++
	c.rl.caller = nil
	switch {
	case c.state == stateEnded:
		c.rl.holder = roleFree // nobody reads an ended connection
	case len(c.pending) > 0:
		c.takeForLoop()
		go c.readLoop()
	default:
		c.rl.holder = roleFree
		c.rl.watch.Reset(watchAfter)
	}
}

// takeRole makes cl's caller the reader if the role is free and cl still waits for its
// reply, and reports whether it did; under c.mu.
func (c *Conn) takeRole(cl *call) bool {
	if c.state == stateEnded || c.pending[cl.id] != cl || c.rl.holder != roleFree {
		return false // another reads, or its reply (or the connection's end) is in its channel
	}
	c.rl.holder, c.rl.caller = roleCaller, cl
	c.rl.stint++
	return true
}

// lead reads the output as its reader on behalf of cl's caller, who holds the role, until
// cl's reply arrives, and returns it (done). It returns done false, still holding the
// role, when ctx ended or the call deadline dl (zero when ctx has its own) passed first:
// a read deadline interrupts the Read, and the caller then gives up (giveUp hands the
// role on). When the connection ends meanwhile, the reply is its error from cl's channel.
func (c *Conn) lead(ctx context.Context, cl *call, dl time.Time) (r reply, done bool) {
	c.mu.Lock()
	if c.state == stateEnded {
		c.mu.Unlock()
		return <-cl.ch, true
	}
	stint := c.rl.stint
	_ = c.rl.dl.SetReadDeadline(dl)
	c.mu.Unlock()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			c.mu.Lock()
			if c.rl.stint == stint {
				_ = c.rl.dl.SetReadDeadline(longAgo)
			}
			c.mu.Unlock()
		})
		defer stop()
	}
	for {
		p, err := c.rl.rd.ReadFrame()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && !c.ended() {
				if ctx.Err() != nil || (!dl.IsZero() && !time.Now().Before(dl)) {
					return reply{}, false
				}
				c.mu.Lock()
				_ = c.rl.dl.SetReadDeadline(dl) // early by a clock's grain: wait on
				c.mu.Unlock()
				continue
			}
			c.readFailed(err)
			return <-cl.ch, true
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			c.end(violation(wire.InvalidResponse, err)) // R54
			return <-cl.ch, true
		}
		switch r, st := c.deliver(&m, cl); st {
		case readOwn:
			return r, true
		case readStop:
			return <-cl.ch, true
		}
	}
}

// readFailed handles the end of the adapter's output or a framing error (R4, R5, R52,
// R53). After the host ended the connection a read error is only its consequence.
func (c *Conn) readFailed(err error) {
	if c.ended() {
		return
	}
	if err == io.EOF {
		var cause error
		if c.onPeerGone != nil {
			cause = c.onPeerGone()
		}
		if cause == nil {
			cause = violation(wire.Output, fmt.Errorf("output ended: %w", io.EOF))
		}
		c.end(cause)
		return
	}
	c.end(violation(wire.Output, err))
}

// What a reader does after a frame (deliver).
type readStep uint8

const (
	readOn   readStep = iota // read the next frame
	readOwn                  // the reply is the reading caller's own: it has left the role
	readStop                 // the connection ended, or readLoop left the role
)

// deliver routes one reply to its pending call and releases the call's slot; self is the
// reading caller's call, nil for readLoop. The reader's own reply is returned (readOwn),
// and the role passed on (passRole). A reply to an identity that is not pending (never sent, or
// completed) ends the connection (R35, R55). readLoop leaves the role when nothing is in
// flight any more and callers can read (readStop).
func (c *Conn) deliver(m *proto.Message, self *call) (reply, readStep) {
	c.mu.Lock()
	cl, ok := c.pending[m.ID]
	if !ok {
		ended := c.state == stateEnded
		c.mu.Unlock()
		if !ended {
			c.end(violation(wire.UnknownReply, fmt.Errorf("%s for id %d, which is not pending", m.Type, m.ID)))
		}
		return reply{}, readStop
	}
	delete(c.pending, m.ID)
	<-c.slots // the call's slot, held until now (R39, A17)
	var r reply
	if m.Type == proto.TypeResult {
		r = reply{value: m.Value, long: m.Strings}
	} else {
		r = reply{isErr: true, code: m.Code, rawCode: m.RawCode, message: m.Message}
	}
	step := readOn
	switch {
	case cl == self:
		c.passRole()
		step = readOwn
	case cl.abandoned:
		c.abandoned--
		putCall(cl)
		if c.log.IsTrace() {
			c.log.Trace("reply to an abandoned call dropped", "id", m.ID, "type", m.Type.String())
		}
	default:
		cl.ch <- r
	}
	if self == nil && c.rl.dl != nil && len(c.pending) == 0 {
		c.passRole()
		step = readStop
	}
	c.mu.Unlock()
	return r, step
}
