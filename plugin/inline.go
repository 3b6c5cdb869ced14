package plugin

import (
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// inlineFor is how long a lone request's handler runs in the reading goroutine before
// the turn is passed on anyway (a variable for tests). A handler that returns sooner is
// served without waking any other goroutine; a longer one delays reading (a cancel of it,
// or another request) by about this much.
var inlineFor = 50 * time.Microsecond

// coldInlineFor is inlineFor for initialize, which runs alone by rule (R18: a host sends
// nothing else before its result), and for the first request served inline after it.
// It is longer because an adapter's first requests meet cold memory and code (and
// build their types' codecs), and passing the turn then starts a goroutine whose stack
// grows while it serves: at a start, that costs more than the handshake itself. Only a
// host's disconnect, or input sent during that one request, waits for it.
var coldInlineFor = time.Millisecond

// inlineTurn is the reading turn while a goroutine runs a lone request's handler itself:
// kept says the goroutine still holds it; the timer takes it from it after inlineFor and
// passes it on, as the reader of r reporting to done.
type inlineTurn struct {
	kept  atomic.Bool
	timer *time.Timer
	c     *conn
	r     *proto.Reader
	done  chan<- error
	warm  bool // a request has been served inline since initialize (see coldInlineFor)
}

func (t *inlineTurn) init(c *conn, r *proto.Reader, done chan<- error) {
	t.c, t.r, t.done = c, r, done
	t.timer = time.AfterFunc(time.Hour, func() {
		if t.kept.CompareAndSwap(true, false) {
			t.c.passTurn(t.r, t.done)
		}
	})
	t.timer.Stop()
}

// runInline runs a lone request's handler (none other in flight, no more input read
// ahead), or initialize, in the reading goroutine without passing the turn first: on a
// machine with idle processors, waking the next reader costs more than a short handler,
// and the reply goes out sooner without it. Requests that come together (read ahead, or
// while another runs) are served as before, each handler beside the next reader, so
// that a host's burst is served in parallel and its replies written together. Cancels
// and other requests must still be read while a handler runs, so if it runs longer than
// inlineFor (coldInlineFor at first) a timer passes the turn as read does at once for a
// request that is not alone. runInline reports whether the goroutine still holds the
// turn when the handler has returned; if the handler ends the goroutine instead
// (runtime.Goexit), the turn is passed.
func (c *conn) runInline(req request) (kept bool) {
	t := &c.inline
	t.kept.Store(true)
	// Only the goroutine holding the reading turn runs this, so warm needs no lock;
	// initialize comes first, while it is false.
	budget := inlineFor
	if !t.warm {
		budget = coldInlineFor
	}
	t.timer.Reset(budget)
	t.warm = t.warm || !req.init
	returned := false
	defer func() {
		if kept = t.kept.CompareAndSwap(true, false); kept {
			t.timer.Stop()
			if !returned {
				c.passTurn(t.r, t.done) // the goroutine ends
			}
		}
	}()
	if req.init {
		c.runInitialize(req)
	} else {
		c.run(req)
	}
	returned = true
	return kept
}
