package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

// hostFault is a fault a host might commit after the handshake, that the adapter cannot
// tie to a request id: the adapter must end the connection, exiting promptly and
// cleanly (A28), not carry on, hang or crash.
type hostFault struct {
	check string
	frame []byte // the bytes written, whole frames
}

// hostFaults are the faults sent, each to a fresh, initialized adapter.
var hostFaults = func() []hostFault {
	frame := func(payload string) []byte {
		b, err := proto.AppendFrame(nil, []byte(payload), 0, false)
		if err != nil {
			panic(err) // a constant payload: a programming error
		}
		return b
	}
	return []hostFault{
		{checkFaultJSON, frame(`{"type":"request","v":1,"id":2,"method":`)},
		{checkFaultType, frame(`{"type":"result","v":1,"id":2,"value":{}}`)},
		{checkFaultEmpty, []byte{0, 0, 0, 0}},
	}
}()

// crashMarkers are what runtimes print on stderr when a program dies of an unhandled
// error; an adapter that ends that way did not end cleanly.
var crashMarkers = []string{
	"panic:", "panicked at", "Traceback (most recent call last)", "Uncaught ", "fatal error:", "unhandled exception",
}

// faultSessions runs one session per host fault.
func (c *checker) faultSessions(ctx context.Context) {
	for _, f := range hostFaults {
		if ctx.Err() != nil {
			return
		}
		c.hostFault(ctx, f)
	}
}

// hostFault starts the adapter, initializes it, sends the fault, and checks that the
// adapter exits on its own within the process cleanup bound, without a crash.
func (c *checker) hostFault(ctx context.Context, f hostFault) {
	capture := &boundedBuffer{max: 64 << 10}
	proc := c.proc
	if proc.Stderr != nil {
		proc.Stderr = io.MultiWriter(proc.Stderr, capture)
	} else {
		proc.Stderr = capture
	}
	s, err := startSession(ctx, proc, false)
	if err != nil {
		c.failed(f.check, "could not start the adapter: %v", err)
		return
	}
	exited := c.sendFault(ctx, s, f)
	c.end(s) // also waits for the copy of stderr
	if exited == "" {
		return
	}
	if line := crashLine(capture.String()); line != "" {
		c.failed(f.check, "%s, but crashed: stderr says %s", exited, short(line))
		return
	}
	c.pass(f.check, "%s, cleanly", exited)
}

// sendFault initializes s, writes the fault and waits for the exit. It returns a
// description of the exit, or "" after recording why the check did not pass.
func (c *checker) sendFault(ctx context.Context, s *session, f hostFault) string {
	id, err := s.request(proto.MethodInitialize, proto.AppendInitializeParams(nil, c.config))
	var m proto.Message
	if err == nil {
		m, err = s.await(ctx, id, c.timeout)
	}
	if err != nil || m.Type != proto.TypeResult {
		c.skip(f.check, "no initialize result to start from (see handshake)")
		return ""
	}
	start := time.Now()
	if err := s.write(f.frame); err != nil {
		if s.waitExit(ctx, 0) {
			return fmt.Sprintf("exited at once (%v)", s.tree.ExitState())
		}
		c.failed(f.check, "writing the fault: %v", err)
		return ""
	}
	if !s.waitExit(ctx, limits.ProcessCleanup) {
		c.failed(f.check, "still running %v after the fault, with stdin open: it should end the connection", limits.ProcessCleanup)
		return ""
	}
	return fmt.Sprintf("exited %v after the fault", time.Since(start).Round(time.Millisecond))
}

// crashLine returns the first line of stderr with a crash marker, or "".
func crashLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		for _, m := range crashMarkers {
			if strings.Contains(line, m) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// boundedBuffer keeps the first max bytes written to it and discards the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
