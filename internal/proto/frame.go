package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/adapterkit/adapterkit/limits"
)

// Frame errors. Each is a protocol violation that ends the connection (R4, R5); a
// *FrameError wraps one of them, so errors.Is works on the cause.
var (
	// ErrFrameEmpty is a zero-length frame (R4).
	ErrFrameEmpty = errors.New("zero-length frame")
	// ErrFrameTooLarge is a length prefix above the frame cap (R3, R5).
	ErrFrameTooLarge = errors.New("frame exceeds the size limit")
	// ErrFrameTruncated is a stream that ended inside a frame's header or payload.
	ErrFrameTruncated = errors.New("stream ended inside a frame")
)

// FrameError describes a framing violation.
type FrameError struct {
	Err    error  // ErrFrameEmpty, ErrFrameTooLarge or ErrFrameTruncated
	Length uint64 // the length prefix, when one was read
	Max    int    // the cap in force
	Cause  error  // the underlying read error, for ErrFrameTruncated
	// Header holds the bytes of the length prefix as read (1 to 4 of them; none when
	// the stream ended cleanly before it or the error is a sender's).
	Header []byte
}

// Error describes the violation in one line. When the length prefix reads as text it
// says so, with the likely cause (see [FrameError.Text]).
func (e *FrameError) Error() string {
	var s string
	switch e.Err {
	case ErrFrameTooLarge:
		s = fmt.Sprintf("wire: %v: length %d, limit %d", e.Err, e.Length, e.Max)
	case ErrFrameTruncated:
		if len(e.Header) < limits.FrameHeaderSize {
			s = fmt.Sprintf("wire: %v (%d of the %d header bytes): %v", e.Err, len(e.Header), limits.FrameHeaderSize, e.Cause)
		} else {
			s = fmt.Sprintf("wire: %v (length %d): %v", e.Err, e.Length, e.Cause)
		}
	default:
		s = "wire: " + e.Err.Error()
	}
	if t, ok := e.Text(); ok {
		s += fmt.Sprintf(" (the length prefix reads as text %q: something printed to stdout?)", t)
	}
	return s
}

// Text returns the length prefix as a string when it reads as text: every byte of it
// is printable ASCII, a tab, a carriage return or a line feed. Any such 4-byte prefix
// is far above the frame cap, so the cause is almost always text written where frames
// belong: a stray print on an adapter's stdout (R6), or a person typing at an adapter.
func (e *FrameError) Text() (string, bool) {
	return TextPrefix(e.Header)
}

// TextPrefix reports whether the bytes b, the start of a frame, read as text (see
// [FrameError.Text]), and returns them as a string if so. Empty b does not.
func TextPrefix(b []byte) (string, bool) {
	if len(b) == 0 {
		return "", false
	}
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return "", false
		}
	}
	return string(b), true
}

// Unwrap returns the sentinel cause and, for truncation, the read error.
func (e *FrameError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// Reader reads frames from a stream. It is not safe for concurrent use: a connection's
// reader owns it (one at a time, handed over with a happens-before, as by a mutex). It is the module's one frame reader: the control plane's framing
// (same shape, another cap, empty frames allowed) uses it too, through [NewReaderConfig].
type Reader struct {
	br         readBuffer
	max        int
	allowEmpty bool
	hdr        [limits.FrameHeaderSize]byte
	// The frame a read deadline interrupted, continued by the next ReadFrame: hn
	// header bytes, then (once the header is complete) have bytes of a payload of size.
	hn         int
	p          []byte
	have, size int
}

// ReaderConfig configures a Reader for a framing of the protocol's shape (a 4-byte
// big-endian length, then that many bytes) other than the adapter protocol's own.
type ReaderConfig struct {
	// Max caps a frame's payload; <= 0 means [limits.MaxFrameSize]. Unlike
	// [NewReader]'s, it is not clamped to the adapter protocol's cap (the control
	// plane's is [limits.ControlMaxFrameSize]).
	Max int
	// AllowEmpty returns a zero-length frame as an empty payload instead of a
	// *FrameError with ErrFrameEmpty (the adapter protocol forbids them, R4).
	AllowEmpty bool
}

// NewReader returns a Reader of frames whose payload is at most max bytes; max <= 0 or
// above the protocol cap means the protocol cap ([limits.MaxFrameSize]).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 || max > limits.MaxFrameSize {
		max = limits.MaxFrameSize
	}
	fr := &Reader{max: max}
	fr.br.init(r)
	return fr
}

// NewReaderConfig returns a Reader of frames as cfg says.
func NewReaderConfig(r io.Reader, cfg ReaderConfig) *Reader {
	max := cfg.Max
	if max <= 0 {
		max = limits.MaxFrameSize
	}
	fr := &Reader{max: max, allowEmpty: cfg.AllowEmpty}
	fr.br.init(r)
	return fr
}

// ReadFrame reads one frame and returns its payload in a newly allocated slice that the
// caller owns. It returns io.EOF, unwrapped, when the stream ends cleanly between frames,
// and a *FrameError for a zero-length, oversized or truncated frame. The length is
// checked before anything is allocated or read beyond the header (R5). Within the
// protocol's frame cap (4 MiB) the payload is allocated once, at its announced length,
// and is the caller's for good (decoded strings may share it); a reader configured
// with a larger cap (the control plane) grows a large payload's buffer as its bytes
// arrive, so that a peer that announces that cap and then stalls costs what it sent,
// not what it announced.
//
// A read of the stream that fails with os.ErrDeadlineExceeded (its read deadline
// passed: a reader that sets one is told to stop waiting, not that the stream broke)
// is returned as it is, and the Reader keeps what it read of the frame: the next
// ReadFrame continues it. Any other error ends the frame.
func (r *Reader) ReadFrame() ([]byte, error) {
	if r.hn < len(r.hdr) {
		if err := r.readHeader(); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(r.hdr[:])
		switch {
		case n == 0 && r.allowEmpty:
			r.hn = 0
			return []byte{}, nil
		case n == 0:
			r.hn = 0
			return nil, &FrameError{Err: ErrFrameEmpty, Max: r.max, Header: slices.Clone(r.hdr[:])}
		case uint64(n) > uint64(r.max):
			r.hn = 0
			return nil, &FrameError{Err: ErrFrameTooLarge, Length: uint64(n), Max: r.max, Header: slices.Clone(r.hdr[:])}
		}
		r.size, r.have = int(n), 0
		if r.max > limits.MaxFrameSize {
			// Above the adapter protocol's own cap (the control plane's 16 MiB), a stalled
			// peer must not pin what it announced: grow as the bytes arrive.
			r.p = make([]byte, min(r.size, growChunk))
		} else {
			r.p = make([]byte, r.size)
		}
	}
	for {
		for r.have < len(r.p) {
			k, err := r.br.Read(r.p[r.have:])
			r.have += k
			if err != nil && r.have < len(r.p) {
				if paused(err) {
					return nil, err
				}
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				size := r.size
				r.hn, r.p, r.have, r.size = 0, nil, 0, 0
				return nil, &FrameError{Err: ErrFrameTruncated, Length: uint64(size), Max: r.max, Cause: err, Header: slices.Clone(r.hdr[:])}
			}
		}
		if r.have == r.size {
			p := r.p
			r.hn, r.p, r.have, r.size = 0, nil, 0, 0
			return p, nil
		}
		grown := min(r.size, 2*r.have)
		r.p = slices.Grow(r.p, grown-r.have)[:grown]
	}
}

// Buffered reports whether bytes of the stream are buffered in the Reader beyond the
// frames it returned: the next ReadFrame has something to start from without waiting.
func (r *Reader) Buffered() bool { return r.br.start < r.br.end }

// readHeader reads the rest of the frame header, as io.ReadFull would.
func (r *Reader) readHeader() error {
	for r.hn < len(r.hdr) {
		k, err := r.br.Read(r.hdr[r.hn:])
		r.hn += k
		if err != nil && r.hn < len(r.hdr) {
			if paused(err) {
				return err
			}
			hn := r.hn
			r.hn = 0
			if err == io.EOF {
				if hn == 0 {
					return io.EOF
				}
				err = io.ErrUnexpectedEOF
			}
			return &FrameError{Err: ErrFrameTruncated, Max: r.max, Cause: err, Header: slices.Clone(r.hdr[:hn])}
		}
	}
	return nil
}

// paused reports whether a read error only interrupted the wait for the stream (its
// read deadline passed), which leaves a frame in progress to the next ReadFrame.
func paused(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// growChunk is the first allocation for a payload larger than it; the buffer then
// doubles as the bytes arrive.
const growChunk = 64 << 10

// BeginFrame appends room for a frame header to dst and returns it; append the payload
// after it and call [FinishFrame] with the slice starting at the header.
func BeginFrame(dst []byte) []byte {
	return append(dst, 0, 0, 0, 0)
}

// FinishFrame fills in the header of frame (as begun by [BeginFrame]) and returns it. It
// refuses an empty payload (R4) and one longer than max (R3; max <= 0 means the protocol
// cap) with a *FrameError, so that a sender never puts such a frame on the wire.
func FinishFrame(frame []byte, max int) ([]byte, error) {
	return FinishSplicedFrame(frame, 0, max)
}

// FinishSplicedFrame fills in the header of a frame (as begun by [BeginFrame]) whose
// payload is frame's bytes with more bytes spliced in, written separately, and returns
// it; it refuses what FinishFrame refuses, counting the spliced bytes.
func FinishSplicedFrame(frame []byte, more, max int) ([]byte, error) {
	if max <= 0 || max > limits.MaxFrameSize {
		max = limits.MaxFrameSize
	}
	return FinishFrameCap(frame, more, max, false)
}

// FinishFrameCap is [FinishSplicedFrame] for a framing of the protocol's shape with
// another cap: max, which must be positive, is not clamped to the protocol's (the
// control plane's frames may be up to [limits.ControlMaxFrameSize]), and an empty
// payload is framed when allowEmpty (as [ReaderConfig.AllowEmpty] reads it).
func FinishFrameCap(frame []byte, more, max int, allowEmpty bool) ([]byte, error) {
	if len(frame) < limits.FrameHeaderSize {
		return nil, &FrameError{Err: ErrFrameEmpty, Max: max}
	}
	n := len(frame) - limits.FrameHeaderSize + more
	switch {
	case n == 0 && !allowEmpty:
		return nil, &FrameError{Err: ErrFrameEmpty, Max: max}
	case n > max:
		return nil, &FrameError{Err: ErrFrameTooLarge, Length: uint64(n), Max: max}
	}
	binary.BigEndian.PutUint32(frame, uint32(n))
	return frame, nil
}

// AppendFrame appends payload to dst as one frame (its header, then payload) and
// returns the result: the module's one way to frame bytes already in hand (hot paths
// build the payload in place with BeginFrame and FinishFrame instead). It refuses what
// [FinishFrameCap] refuses, with max <= 0 meaning the protocol cap
// ([limits.MaxFrameSize]), and then returns dst as it was with the *FrameError.
func AppendFrame(dst, payload []byte, max int, allowEmpty bool) ([]byte, error) {
	if max <= 0 {
		max = limits.MaxFrameSize
	}
	start := len(dst)
	dst = append(BeginFrame(dst), payload...)
	if _, err := FinishFrameCap(dst[start:], 0, max, allowEmpty); err != nil {
		return dst[:start], err
	}
	return dst, nil
}
