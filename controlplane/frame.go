package controlplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/adapterkit/adapterkit/limits"
)

// Framing errors; a *FrameError wraps one of them.
var (
	// ErrFrameOversized: a length prefix above the 16 MiB cap. The body is never
	// read nor buffered.
	ErrFrameOversized = errors.New("frame exceeds the 16 MiB cap")
	// ErrFrameTruncated: the stream ended inside a frame.
	ErrFrameTruncated = errors.New("stream ended inside a frame")
)

// FrameError is a framing failure on a control-plane connection.
type FrameError struct {
	Size uint32 // the length prefix, when one was read
	Err  error  // ErrFrameOversized, ErrFrameTruncated, or a read error
}

func (e *FrameError) Error() string {
	if errors.Is(e.Err, ErrFrameOversized) {
		return fmt.Sprintf("controlplane: frame of %d bytes: %v", e.Size, e.Err)
	}
	return "controlplane: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FrameError) Unwrap() error { return e.Err }

const headerSize = 4

// frameReader reads frames: a 4-byte big-endian length, then that many bytes.
type frameReader struct {
	r   io.Reader
	hdr [headerSize]byte
}

// read returns the next body. A clean end of stream before a frame is io.EOF. A
// zero-length frame is returned as an empty body (the protocol does not forbid it;
// the caller decides what an empty body means).
func (f *frameReader) read() ([]byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			err = ErrFrameTruncated
		}
		return nil, &FrameError{Err: err}
	}
	n := binary.BigEndian.Uint32(f.hdr[:])
	if n > limits.ControlMaxFrameSize {
		return nil, &FrameError{Size: n, Err: ErrFrameOversized}
	}
	// The body grows as its bytes arrive (doubling, from frameChunk): a peer that
	// announces 16 MiB and then stalls costs what it sent, not what it announced.
	size := int(n)
	body := make([]byte, 0, min(size, frameChunk))
	for len(body) < size {
		have := len(body)
		next := min(size, max(2*have, frameChunk))
		body = slices.Grow(body, next-have)[:next]
		if _, err := io.ReadFull(f.r, body[have:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = ErrFrameTruncated
			}
			return nil, &FrameError{Size: n, Err: err}
		}
	}
	return body, nil
}

// frameChunk is the first allocation for a frame's body.
const frameChunk = 64 << 10

// appendFrame returns body framed: its length, big-endian, then the body. It
// refuses a body over the cap.
func appendFrame(dst, body []byte) ([]byte, error) {
	if len(body) > limits.ControlMaxFrameSize {
		return nil, &FrameError{Size: uint32(min(len(body), 1<<32-1)), Err: ErrFrameOversized}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...), nil
}

// maxFrame is the cap on a frame's body (the prefix excluded): 16 MiB.
const maxFrame = limits.ControlMaxFrameSize
