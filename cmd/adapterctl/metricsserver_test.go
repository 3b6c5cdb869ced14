package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/testkit"
)

// closedByServer waits (up to a bound far above the server's timeouts) for the server
// to close c, and fails if it does not.
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: still open after 20 s", what)
	}
	if err == nil {
		t.Fatalf("%s: read data, want the server to close it", what)
	}
}

// metricsEndpoint serves a one-line /metrics within lim until the test ends; it
// returns the address and a function that stops the server and returns what
// serveMetrics returned.
func metricsEndpoint(t *testing.T, lim metricsLimits) (string, func() error) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	srv := newMetricsServer(mux, lim, hclog.NewNullLogger())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serveMetrics(srv, ln, lim) }()
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		return <-served
	}
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), stop
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// scrapeOn sends one request for /metrics on c and reads the answer; false when the
// connection was closed instead.
func scrapeOn(t *testing.T, c net.Conn) bool {
	t.Helper()
	if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("no answer within 20 s")
		}
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return true
}

// The metrics endpoint closes a connection that sends no request, and one left idle
// after a request.
func TestMetricsServerTimeouts(t *testing.T) {
	lim := metricsLimits{maxConns: 4, header: 300 * time.Millisecond, read: time.Second, write: time.Second, idle: 300 * time.Millisecond}
	addr, stop := metricsEndpoint(t, lim)
	closedByServer(t, dialT(t, addr), "silent connection")
	kept := dialT(t, addr)
	if !scrapeOn(t, kept) {
		t.Fatal("scrape refused")
	}
	closedByServer(t, kept, "idle kept-alive connection")
	if err := stop(); err != nil {
		t.Errorf("serveMetrics after Shutdown: %v", err)
	}
}

// The metrics endpoint holds at most maxConns connections: one more is closed at once
// while the others stay served, and once they are gone a new one is served again.
// Its listener closed under it (as the daemon's stop does) is no error.
func TestMetricsServerConnectionCap(t *testing.T) {
	lim := metricsLimits{maxConns: 4, header: time.Minute, read: time.Minute, write: time.Minute, idle: time.Minute}
	addr, stop := metricsEndpoint(t, lim)
	var held []net.Conn
	for range lim.maxConns {
		held = append(held, dialT(t, addr))
	}
	// Accepted in order: every held one is accepted before the extra one.
	closedByServer(t, dialT(t, addr), "connection beyond the cap")
	for i, c := range held {
		if !scrapeOn(t, c) {
			t.Fatalf("held connection %d closed", i)
		}
	}
	for _, c := range held {
		_ = c.Close()
	}
	testkit.Eventually(t, 20*time.Second, func() bool { return scrapeOn(t, dialT(t, addr)) },
		"no connection served after the held ones closed")
	if err := stop(); err != nil {
		t.Errorf("serveMetrics after Shutdown: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newMetricsServer(http.NewServeMux(), lim, hclog.NewNullLogger())
	served := make(chan error, 1)
	go func() { served <- serveMetrics(srv, ln, lim) }()
	_ = ln.Close()
	if err := <-served; err != nil {
		t.Errorf("serveMetrics after its listener was closed: %v", err)
	}
	_ = srv.Close()
}
