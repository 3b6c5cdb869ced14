package plugin

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// initialize registers the handshake, to be answered as a request is (see conn.read),
// so that stdin keeps being read (a cancel or the end of stdin) while OnInitialize runs.
// Only the first initialize is served; any later one is answered invalid, whatever
// became of the first (A7). It returns the request to run, or a zero request.
func (c *conn) initialize(id uint64, params []byte) request {
	if !c.state.CompareAndSwap(stateNew, stateInitializing) {
		c.replyError(id, wire.CodeInvalid, msgReinitialize)
		return request{}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return request{}
	}
	ctx, cancel := context.WithCancelCause(c.base)
	c.initID, c.initCancel = id, cancel
	c.running++
	c.mu.Unlock()
	return request{ctx: ctx, cancel: cancel, id: id, params: params, init: true}
}

// runInitialize answers the handshake: the catalog, or the error of configure.
func (c *conn) runInitialize(req request) {
	ctx, cancel, id, params := req.ctx, req.cancel, req.id, req.params
	err := c.configure(ctx, params)
	c.mu.Lock()
	c.initID, c.initCancel = 0, nil
	c.mu.Unlock()
	cancel(nil)

	buf := getFrame()
	if err != nil {
		c.state.Store(stateFailed)
		c.log.Warn("initialize refused", "error", err)
		*buf = errorFrame((*buf)[:0], id, err)
	} else {
		// Ready before the reply is queued: a request sent on seeing it is served.
		c.state.Store(stateReady)
		b := proto.AppendResult(proto.BeginFrame((*buf)[:0]), id, c.catalog)
		if b, err = proto.FinishFrame(b, c.maxFrame); err != nil {
			c.state.Store(stateFailed)
			b = errorFrame((*buf)[:0], id, Errorf(wire.CodeFailed, "The catalog exceeds the adapter frame limit"))
		}
		*buf = b
	}
	c.reply(buf)
	c.finished()
}

// configure decodes initialize's params and configuration and runs OnInitialize.
func (c *conn) configure(ctx context.Context, params []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("initialize panicked", "panic", r, "stack", string(debug.Stack()))
			err = &panicError{value: r}
		}
	}()
	config, err := proto.DecodeInitializeParams(params)
	if err != nil {
		var ee *proto.EnvelopeError
		if errors.As(err, &ee) {
			return Errorf(wire.CodeInvalid, "Invalid %s", ee.Reason)
		}
		return Errorf(wire.CodeInvalid, "Invalid initialize params: %v", err)
	}
	if c.a.Configuration != nil {
		if err := decodeObject(config, c.a.Configuration); err != nil {
			return Errorf(wire.CodeInvalid, "Invalid configuration: %v", err)
		}
	}
	if c.a.OnInitialize != nil {
		if err := c.a.OnInitialize(ctx); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
	}
	return nil
}
