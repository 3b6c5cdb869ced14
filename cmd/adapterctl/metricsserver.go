package main

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// metricsLimits bound what clients of the metrics endpoint, which is unauthenticated
// by nature, may hold of the daemon: a connection each, for a bounded time.
type metricsLimits struct {
	// maxConns caps the connections open at once; one more is closed as soon as it is
	// accepted, so that its descriptor is not kept.
	maxConns int
	// header bounds reading a request's headers, read the whole request, write the
	// answer, and idle the wait for a next request on a kept-alive connection.
	header, read, write, idle time.Duration
}

// defaultMetricsLimits leave a scraper (one request every few seconds, answered in
// milliseconds) far inside them.
var defaultMetricsLimits = metricsLimits{maxConns: 16, header: 5 * time.Second, read: 10 * time.Second,
	write: 30 * time.Second, idle: 30 * time.Second}

// newMetricsServer returns the HTTP server of the metrics endpoint, serving h within
// lim's timeouts; serve it with serveMetrics.
func newMetricsServer(h http.Handler, lim metricsLimits, log hclog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: lim.header, ReadTimeout: lim.read, WriteTimeout: lim.write,
		IdleTimeout: lim.idle, MaxHeaderBytes: 8 << 10,
		ErrorLog: log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug})}
}

// serveMetrics serves srv on ln, at most lim.maxConns connections at once, until srv
// is shut down; it returns nil then, as when ln was closed by the daemon's stop.
func serveMetrics(srv *http.Server, ln net.Listener, lim metricsLimits) error {
	err := srv.Serve(&limitListener{Listener: ln, free: make(chan struct{}, lim.maxConns)})
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// limitListener accepts at most cap(free) connections open at once and closes the
// others at once.
type limitListener struct {
	net.Listener
	free chan struct{} // one element per open connection
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.free <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.free }}, nil
		default:
			_ = c.Close()
		}
	}
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
