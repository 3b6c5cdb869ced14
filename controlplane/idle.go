package controlplane

import (
	"sync"
	"time"
)

// idleWatch closes a connection that has no request under way and has sent no
// frame for its timeout: ServerConfig.IdleTimeout for a socket client,
// RemoteConfig.IdleTimeout for a remote one.
type idleWatch struct {
	c *serverConn
	d time.Duration

	mu   sync.Mutex
	last time.Time
	t    *time.Timer
}

// watchIdle sets c's idle watch, with timeout d, and starts it: c.idle is set
// before the timer exists, so that its firing sees it.
func watchIdle(c *serverConn, d time.Duration) {
	w := &idleWatch{c: c, d: d, last: time.Now()}
	c.idle = w
	w.mu.Lock()
	w.t = time.AfterFunc(d, w.fire)
	w.mu.Unlock()
}

// touch records activity: a frame read, or a request ended.
func (w *idleWatch) touch() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// since returns when the connection was last active (see touch).
func (w *idleWatch) since() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// stop ends the watch.
func (w *idleWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.t.Stop()
	w.mu.Unlock()
}

func (w *idleWatch) fire() {
	w.mu.Lock()
	if left := w.d - time.Since(w.last); left > 0 {
		w.t.Reset(left)
		w.mu.Unlock()
		return
	}
	if w.c.busy() {
		w.t.Reset(w.d)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	s := w.c.srv
	s.dropped.Add(1)
	if r := w.c.remote; r != nil {
		r.dropped.Add(1)
		s.log.Warn("remote client idle; closed", "client", w.c.raw.RemoteAddr().String(),
			"identity", w.c.perm.identity, "idle", w.d)
	} else {
		s.log.Info("socket client idle; closed", "idle", w.d)
	}
	w.c.kill() // stops the watch
}

// busy reports whether the connection has requests under way.
func (c *serverConn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids) > 0
}
