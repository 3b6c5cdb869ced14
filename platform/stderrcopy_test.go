package platform

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// chunkReader returns its chunks one per Read (as a pipe returns what was written so
// far), recording the size of each buffer it is given.
type chunkReader struct {
	chunks [][]byte
	sizes  []int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.sizes = append(r.sizes, len(p))
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// The standard error copy waits with a small buffer, takes a large one only while reads
// fill it and gives it back once the pipe is drained; what it copies is exact.
func TestStderrCopyBuffers(t *testing.T) {
	pattern := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		return b
	}
	const s, l = stderrSmallBuf, stderrLargeBuf
	for _, c := range []struct {
		name   string
		chunks []int
		sizes  []int // buffer sizes of the reads, the last one seeing EOF
	}{
		{"quiet lines", []int{40, 100}, []int{s, s, s}},
		{"a burst, then idle", []int{3 * l}, []int{s, l, l, l, s}},
		{"a burst ending short", []int{s + 100}, []int{s, l, s}},
		{"exactly the small buffer", []int{s, 10}, []int{s, l, s}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []byte
			r := &chunkReader{}
			for _, n := range c.chunks {
				p := pattern(n)
				want = append(want, p...)
				r.chunks = append(r.chunks, p)
			}
			var got bytes.Buffer
			copyStderr(&got, r)
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("copied %d bytes, not the %d written", got.Len(), len(want))
			}
			if !slices.Equal(r.sizes, c.sizes) {
				t.Fatalf("read buffers %v, want %v", r.sizes, c.sizes)
			}
		})
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("refused")
}

// A writer that fails ends the copy, as with io.Copy.
func TestStderrCopyStopsOnWriteError(t *testing.T) {
	r := &chunkReader{chunks: [][]byte{[]byte("one\n"), []byte("two\n")}}
	w := &failWriter{}
	copyStderr(w, r)
	if w.n != 1 || len(r.sizes) != 1 {
		t.Fatalf("%d writes, %d reads after a failed write; want 1 and 1", w.n, len(r.sizes))
	}
}
