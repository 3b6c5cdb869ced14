package plugin

import (
	"context"
	"time"

	"github.com/adapterkit/adapterkit/limits"
)

// connKey is the context key under which a connection's base context holds the conn.
type connKey struct{}

// connContext returns the context of the connection that ctx's request came on, which
// ends with the connection: the parent of a stream's handler, which outlives the
// request that started it. Outside a connection (a handler called directly) it is ctx
// without its cancellation.
func connContext(ctx context.Context) context.Context {
	if c, ok := ctx.Value(connKey{}).(*conn); ok {
		return c.base
	}
	return context.WithoutCancel(ctx)
}

// streamIdle is how long a stream waits for the host's next call (the next chunk of an
// upload, the next read of a download) before it is given up: the host is gone or no
// longer wants it. It is the standard call deadline, which bounds a call of the host's.
var streamIdle = limits.CallDeadline

// afterIdle runs f once no call came for streamIdle; reset it with the returned timer.
func afterIdle(f func()) *time.Timer { return time.AfterFunc(streamIdle, f) }
