package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
)

// chunkedReader returns the stream in pieces whose sizes cycle through sizes (a pipe
// returns what was written so far), recording the size of each buffer it is given. A
// size of 0 is a read returning nothing.
type chunkedReader struct {
	stream []byte
	sizes  []int
	i      int
	bufs   []int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	r.bufs = append(r.bufs, len(p))
	if len(r.stream) == 0 {
		return 0, io.EOF
	}
	k := len(r.stream)
	if len(r.sizes) > 0 {
		k = r.sizes[r.i%len(r.sizes)]
		r.i++
	}
	n := copy(p, r.stream[:min(k, len(r.stream))])
	r.stream = r.stream[n:]
	return n, nil
}

func frames(sizes ...int) []byte {
	var out []byte
	for i, n := range sizes {
		out = binary.BigEndian.AppendUint32(out, uint32(n))
		out = append(out, bytes.Repeat([]byte{byte('a' + i%26)}, n)...)
	}
	return out
}

// An idle reader waits in Read with the small buffer; it takes the large one only while
// the stream delivers more than the small one holds, and gives it back once drained.
func TestReadBufferWaitsSmall(t *testing.T) {
	const s, l = smallReadBuffer, largeReadBuffer
	for _, c := range []struct {
		name   string
		frames []int // payload sizes
		chunks []int // what each read of the stream returns (cycled); nil: all at once
		bufs   []int // the buffer sizes the stream was read with, the last one at EOF
	}{
		{"one reply at a time", []int{80, 80, 80}, []int{84}, []int{s, s, s, s}},
		{"a burst of small replies", slices.Repeat([]int{96}, 40), nil, []int{s, l, s}},
		{"a large reply", []int{100 << 10}, nil, []int{s, 100<<10 - (s - 4), s}},
		{"a large reply, then a small one", []int{100 << 10, 10}, []int{s, 100<<10 - (s - 4), 14}, []int{s, 100<<10 - (s - 4), s, s}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stream := frames(c.frames...)
			r := &chunkedReader{stream: stream, sizes: c.chunks}
			fr := NewReader(r, 0)
			for i, want := range c.frames {
				p, err := fr.ReadFrame()
				if err != nil || len(p) != want {
					t.Fatalf("frame %d: %d bytes, %v; want %d", i, len(p), err, want)
				}
			}
			if _, err := fr.ReadFrame(); err != io.EOF {
				t.Fatalf("after the last frame: %v", err)
			}
			if !slices.Equal(r.bufs, c.bufs) {
				t.Fatalf("the stream was read with buffers %v, want %v", r.bufs, c.bufs)
			}
			if fr.br.large != nil {
				t.Fatal("the large buffer is held at the end of the stream")
			}
		})
	}
}

// Reads that return nothing are retried, a bounded number of times.
func TestReadBufferNoProgress(t *testing.T) {
	r := &chunkedReader{stream: frames(3), sizes: []int{0, 0, 2, 0, 5}}
	if p, err := NewReader(r, 0).ReadFrame(); err != nil || string(p) != "aaa" {
		t.Fatalf("%q, %v", p, err)
	}
	_, err := NewReader(&chunkedReader{stream: frames(3), sizes: []int{0}}, 0).ReadFrame()
	if !errors.Is(err, io.ErrNoProgress) || !errors.Is(err, ErrFrameTruncated) {
		t.Fatalf("a stream that never delivers: %v", err)
	}
}

// Whatever pieces the stream comes in, the frames read are those of the stream read at
// once, and so is the error that ends them.
func FuzzReadBufferChunks(f *testing.F) {
	f.Add(frames(1, 600, 3), []byte{1, 7, 255})
	f.Add(frames(20000, 5, 512, 508), []byte{4, 0, 200})
	f.Add(append(frames(70000), 0, 0), []byte{})
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		cfg := ReaderConfig{Max: 1 << 20, AllowEmpty: true}
		want := NewReaderConfig(bytes.NewReader(stream), cfg)
		var sizes []int
		for _, c := range chunks {
			sizes = append(sizes, int(c)*int(c)) // 0 .. 65025: nothing, bytes, several buffers
		}
		if len(sizes) > 0 && slices.Max(sizes) == 0 {
			sizes = append(sizes, 1)
		}
		got := NewReaderConfig(&chunkedReader{stream: stream, sizes: sizes}, cfg)
		for i := 0; ; i++ {
			wp, werr := want.ReadFrame()
			gp, gerr := got.ReadFrame()
			if !bytes.Equal(wp, gp) || (werr == nil) != (gerr == nil) {
				t.Fatalf("frame %d: %d bytes, %v; read at once: %d bytes, %v", i, len(gp), gerr, len(wp), werr)
			}
			if werr != nil {
				var wfe, gfe *FrameError
				if werr == io.EOF && gerr != io.EOF || errors.As(werr, &wfe) && (!errors.As(gerr, &gfe) || gfe.Err != wfe.Err) {
					t.Fatalf("frame %d: %v; read at once: %v", i, gerr, werr)
				}
				return
			}
		}
	})
}
