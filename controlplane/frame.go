package controlplane

import (
	"io"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

// ErrFrameTooLarge is matched (errors.Is) by the error of a connection that received
// a frame whose length prefix is above the 16 MiB cap; its body is never read nor
// buffered. It is the adapter protocol's frame error too, with that protocol's cap.
var ErrFrameTooLarge = proto.ErrFrameTooLarge

const headerSize = limits.FrameHeaderSize

// frameReader reads control-plane frames from r with wire's frame reader: the 16 MiB
// cap, and a zero-length frame returned as an empty body (the control-plane framing does
// not forbid it; the caller decides what an empty body means). A clean end of stream
// before a frame is io.EOF. The body grows as its bytes arrive: a peer that announces
// 16 MiB and then stalls costs what it sent, not what it announced.
type frameReader struct {
	r io.Reader
	// max lowers the cap for this stream (a remote client whose role needs no large
	// request); 0 means maxFrame. A cap at most the adapter protocol's (4 MiB) is
	// allocated at the announced length once the header is read, so it bounds what an
	// unfinished frame pins.
	max int
	wr  *proto.Reader
}

func (f *frameReader) read() ([]byte, error) {
	if f.wr == nil {
		m := f.max
		if m <= 0 || m > maxFrame {
			m = maxFrame
		}
		f.wr = proto.NewReaderConfig(f.r, proto.ReaderConfig{Max: m, AllowEmpty: true})
	}
	return f.wr.ReadFrame()
}

// maxFrame is the cap on a frame's body (the prefix excluded): 16 MiB. A frame is
// built by proto.AppendFrame with this cap, an empty body allowed.
const maxFrame = limits.ControlMaxFrameSize
