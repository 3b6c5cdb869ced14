package proto_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

func frameOf(n int, fill byte) []byte {
	out := []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(out, bytes.Repeat([]byte{fill}, n)...)
}

// The one frame reader, configured for another framing of the same shape (the control
// plane's): its own cap, above the adapter protocol's, and empty frames allowed.
func TestReaderConfig(t *testing.T) {
	big := limits.MaxFrameSize + 1 // over the adapter cap, under the control plane's
	stream := append(append(frameOf(0, 0), frameOf(big, 'x')...), frameOf(3, 'y')...)
	r := proto.NewReaderConfig(iotest.HalfReader(bytes.NewReader(stream)), proto.ReaderConfig{Max: limits.ControlMaxFrameSize, AllowEmpty: true})
	for i, want := range []int{0, big, 3} {
		p, err := r.ReadFrame()
		if err != nil || len(p) != want {
			t.Fatalf("frame %d: %d bytes, %v; want %d", i, len(p), err, want)
		}
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}

	// The adapter protocol's reader refuses both (R4, R3).
	for _, c := range []struct {
		frame []byte
		want  error
	}{{frameOf(0, 0), proto.ErrFrameEmpty}, {frameOf(big, 'x'), proto.ErrFrameTooLarge}} {
		_, err := proto.NewReader(bytes.NewReader(c.frame), 0).ReadFrame()
		var fe *proto.FrameError
		if !errors.As(err, &fe) || !errors.Is(err, c.want) {
			t.Fatalf("adapter reader: %v, want a *FrameError matching %v", err, c.want)
		}
	}

	// Over the configured cap: refused from the header, the body never read.
	_, err := proto.NewReaderConfig(bytes.NewReader(frameOf(11, 'z')), proto.ReaderConfig{Max: 10}).ReadFrame()
	var fe *proto.FrameError
	if !errors.As(err, &fe) || fe.Err != proto.ErrFrameTooLarge || fe.Length != 11 || fe.Max != 10 {
		t.Fatalf("over the cap: %#v", err)
	}

	// A large frame cut short is truncated, with the read error as the cause.
	cut := frameOf(big, 'x')[:1<<20]
	_, err = proto.NewReaderConfig(bytes.NewReader(cut), proto.ReaderConfig{Max: limits.ControlMaxFrameSize}).ReadFrame()
	if !errors.Is(err, proto.ErrFrameTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: %v", err)
	}
}
