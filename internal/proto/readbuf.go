package proto

import (
	"io"
	"sync"
)

// Buffers in front of a frame stream. A connection's reader waits in Read for as long
// as the connection is idle, holding the buffer it reads into, so that buffer is most
// of what an idle connection costs: it is small, and a large one (from a pool shared by
// every reader of the process) is used only while the stream delivers more than the
// small one takes at once (a read fills it), then given back once the buffered bytes are
// read and the last read found the stream drained.
const (
	smallReadBuffer = 512
	largeReadBuffer = 16 << 10
)

var largeReadBuffers = sync.Pool{New: func() any { b := make([]byte, largeReadBuffer); return &b }}

// readBuffer is a buffered reader of a stream with the buffers above; like
// bufio.Reader, a read at least as large as the buffer with nothing buffered goes
// straight to the stream. Not safe for concurrent use.
type readBuffer struct {
	rd         io.Reader
	buf        []byte // small[:] or *large
	large      *[]byte
	start, end int   // buf[start:end] is buffered, unread
	busy       bool  // the last read filled the buffer: the stream had more
	err        error // from the stream, returned once the buffer is empty
	small      [smallReadBuffer]byte
}

func (b *readBuffer) init(rd io.Reader) {
	b.rd = rd
	b.buf = b.small[:]
}

// maxEmptyReads is how many successive reads returning nothing (0, nil) are tolerated
// before io.ErrNoProgress, as in bufio.
const maxEmptyReads = 100

// Read reads up to len(p) bytes into p: what is buffered, or else from the stream.
func (b *readBuffer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.start == b.end {
		if b.err != nil {
			err := b.err
			b.err = nil
			return 0, err
		}
		b.start, b.end = 0, 0
		if len(p) < largeReadBuffer {
			b.settle() // a read that large bypasses any buffer: leave them as they are
		}
		if len(p) >= len(b.buf) {
			// Large read, empty buffer: straight into p. Whether the stream has more
			// after it says nothing of the next read (the rest of a large payload is
			// read this way): the next fill starts small again.
			n, err := b.rd.Read(p)
			if n < 0 {
				panic("proto: reader returned a negative count")
			}
			b.busy = false
			return n, err
		}
		b.fill()
		if b.start == b.end {
			err := b.err
			b.err = nil
			return 0, err
		}
	}
	n := copy(p, b.buf[b.start:b.end])
	b.start += n
	return n, nil
}

// settle chooses, with nothing buffered, the buffer the next read of the stream goes
// into: the large one while the stream is busy, else the small one (giving the large one
// back).
func (b *readBuffer) settle() {
	switch {
	case b.busy && b.large == nil:
		b.large = largeReadBuffers.Get().(*[]byte)
		b.buf = *b.large
	case !b.busy && b.large != nil:
		largeReadBuffers.Put(b.large)
		b.large, b.buf = nil, b.small[:]
	}
}

// fill reads once from the stream into the buffer's free space (retrying reads that
// return nothing); an error is kept for when the buffer is empty.
func (b *readBuffer) fill() {
	for range maxEmptyReads {
		space := len(b.buf) - b.end
		n, err := b.rd.Read(b.buf[b.end:])
		if n < 0 {
			panic("proto: reader returned a negative count")
		}
		b.end += n
		b.busy = n == space
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}
