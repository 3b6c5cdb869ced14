package runtime

import (
	"fmt"
	"io"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// readLoop is the only reader of the adapter's output: it decodes each frame and routes
// the reply to its caller, and ends the connection on the first violation.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	rd := proto.NewReader(c.r, c.frameMax)
	for {
		p, err := rd.ReadFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		m, err := proto.DecodeAdapterMessage(p)
		if err != nil {
			c.end(violation(wire.InvalidResponse, err)) // R54
			return
		}
		if !c.deliver(&m) {
			return
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

// deliver routes one reply to its pending call and releases the call's slot. A reply to
// an identity that is not pending (never sent, or completed) ends the connection (R35,
// R55). It reports whether the read loop should go on.
func (c *Conn) deliver(m *proto.Message) bool {
	c.mu.Lock()
	cl, ok := c.pending[m.ID]
	if !ok {
		ended := c.state == stateEnded
		c.mu.Unlock()
		if !ended {
			c.end(violation(wire.UnknownReply, fmt.Errorf("%s for id %d, which is not pending", m.Type, m.ID)))
		}
		return false
	}
	delete(c.pending, m.ID)
	<-c.slots // the call's slot, held until now (R39, A17)
	if cl.abandoned {
		c.mu.Unlock()
		putCall(cl)
		if c.log.IsTrace() {
			c.log.Trace("reply to an abandoned call dropped", "id", m.ID, "type", m.Type.String())
		}
		return true
	}
	if m.Type == proto.TypeResult {
		cl.ch <- reply{value: m.Value, long: m.Strings}
	} else {
		cl.ch <- reply{isErr: true, code: m.Code, rawCode: m.RawCode, message: m.Message}
	}
	c.mu.Unlock()
	return true
}
