//go:build linux

package runtime

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// queueFrames appends frames to c's queue as enqueue does.
func queueFrames(c *Conn, frames ...string) {
	c.mu.Lock()
	for _, f := range frames {
		c.out = append(c.out, f...)
		c.outEnds = append(c.outEnds, len(c.out))
	}
	c.mu.Unlock()
}

// A caller's non-blocking write never waits for a full pipe, and whatever the pipe did
// not take (nothing, or part of a frame) is written later, in order, by the write loop:
// the reader sees every byte once, in queue order.
func TestWriteNowPartialWrites(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// A pipe of four pages, filled but for 1000 bytes.
	// (Through SyscallConn: Fd would put the pipe in blocking mode.)
	rc, err := pw.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	const size = 16384
	var serr error
	if err := rc.Control(func(fd uintptr) { _, serr = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size) }); err != nil || serr != nil {
		t.Fatalf("F_SETPIPE_SZ: %v %v", err, serr)
	}
	ar, aw := io.Pipe() // the adapter's output: nothing ever comes
	defer aw.Close()
	c := NewConn(ar, pw, nil)
	defer c.Close()
	if c.tryWrite == nil {
		t.Fatal("an os.Pipe writer has no non-blocking attempt")
	}
	fill := bytes.Repeat([]byte("f"), size-1000)
	if n, ok := c.tryWrite(fill); n != len(fill) || !ok {
		t.Fatalf("filling the pipe: %d, %v", n, ok)
	}

	var want bytes.Buffer
	want.Write(fill)
	frame := func(i int) string {
		return fmt.Sprintf("[frame %03d %s]", i, bytes.Repeat([]byte{'a' + byte(i%26)}, 300))
	}
	var first, second []string
	for i := range 20 {
		want.WriteString(frame(i))
		if i < 14 {
			first = append(first, frame(i))
		} else {
			second = append(second, frame(i))
		}
	}
	// 14 frames of 312 bytes: Linux puts the last 272 bytes' worth (4368 mod 4096) into
	// the partly filled page and has no page for the rest, so the attempt writes 272
	// bytes, cutting the first frame, and puts the rest back in front of what is queued
	// after it.
	queueFrames(c, first...)
	if c.writeNow() {
		t.Fatal("writeNow reported the whole queue written into a pipe with room for 1000 bytes")
	}
	c.mu.Lock()
	left := len(c.out)
	c.mu.Unlock()
	if left != 14*312-272 {
		t.Fatalf("%d bytes left queued, want %d (the kernel took another amount)", left, 14*312-272)
	}
	// Into a full pipe nothing is written, and nothing waits; frames queued during the
	// attempt go after the ones put back.
	try := c.tryWrite
	c.tryWrite = func(p []byte) (int, bool) {
		queueFrames(c, second...)
		return try(p)
	}
	if c.writeNow() {
		t.Fatal("writeNow reported a write into a full pipe")
	}
	c.wmu.Lock()
	c.tryWrite = try
	c.wmu.Unlock()
	c.kick() // the write loop takes what is left, waiting for the pipe as it must
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0, want.Len())
	buf := make([]byte, 4096)
	for len(got) < want.Len() {
		n, err := pr.Read(buf)
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", len(got), want.Len(), err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the reader saw %d bytes that differ from the %d queued", len(got), want.Len())
	}
}

// A connection whose callers write their requests themselves never starts the write
// loop (an idle connection does not pay for its goroutine); a request a caller cannot
// write starts it, and it ends once idle, to start again when needed.
func TestWriterStartsOnDemand(t *testing.T) {
	defer func(d time.Duration) { writerIdle = d }(writerIdle)
	writerIdle = 20 * time.Millisecond
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	ar, aw := io.Pipe() // the adapter's output: nothing ever comes
	defer aw.Close()
	c := NewConn(ar, pw, nil)
	defer c.Close()
	queueFrames(c, "one")
	if !c.writeNow() {
		t.Fatal("a small frame on an empty pipe was not written at once")
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "one" {
		t.Fatalf("read %q, %v", got, err)
	}
	if c.writer.Load() {
		t.Fatal("the write loop was started though every frame was written by its caller")
	}
	queueFrames(c, "two")
	c.kick() // as a caller whose attempt left the frame queued
	if !c.writer.Load() {
		t.Fatal("kick did not start the write loop")
	}
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "two" {
		t.Fatalf("read %q, %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.writer.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the write loop did not end once idle")
		}
		time.Sleep(5 * time.Millisecond)
	}
	queueFrames(c, "new")
	c.kick()
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v after the loop ended and was kicked again", got, err)
	}
}
