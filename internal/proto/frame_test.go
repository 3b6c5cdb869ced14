package proto_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

func frame(payload string) []byte {
	b := make([]byte, 4, 4+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

func header(n uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, n)
	return b
}

// repeatReader yields the same bytes forever.
type repeatReader struct {
	b []byte
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.i:])
		n += c
		r.i = (r.i + c) % len(r.b)
	}
	return n, nil
}

// R5: an oversized length prefix is refused before anything of its size is allocated.
func TestOversizedAllocatesNothing(t *testing.T) {
	r := proto.NewReader(&repeatReader{b: header(0xffffffff)}, 0)
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for i := 0; i < 100; i++ {
		if _, err := r.ReadFrame(); !errors.Is(err, proto.ErrFrameTooLarge) {
			t.Fatalf("err = %v", err)
		}
	}
	goruntime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("100 oversized headers allocated %d bytes", grew)
	}
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		rule    string
		name    string
		stream  []byte
		max     int
		want    []string
		wantErr error
	}{
		{"R1", "one frame", frame(`{"a":1}`), 0, []string{`{"a":1}`}, io.EOF},
		{"R1", "two frames back to back", append(frame(`{}`), frame(`{"b":2}`)...), 0, []string{`{}`, `{"b":2}`}, io.EOF},
		{"R4", "zero-length frame", append(frame(`{}`), header(0)...), 0, []string{`{}`}, proto.ErrFrameEmpty},
		{"R3", "exactly the cap is allowed (A1)", frame(strings.Repeat("x", 64)), 64, []string{strings.Repeat("x", 64)}, io.EOF},
		{"R5", "cap plus one is oversized (A1)", frame(strings.Repeat("x", 65)), 64, nil, proto.ErrFrameTooLarge},
		{"R5", "4 GiB length prefix", header(0xffffffff), 0, nil, proto.ErrFrameTooLarge},
		{"R5", "protocol cap plus one", header(limits.MaxFrameSize + 1), 0, nil, proto.ErrFrameTooLarge},
		{"R1", "truncated header", []byte{0, 0}, 0, nil, proto.ErrFrameTruncated},
		{"R1", "truncated payload", frame(`{"a":1}`)[:8], 0, nil, proto.ErrFrameTruncated},
		{"R1", "empty stream", nil, 0, nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+tt.name, func(t *testing.T) {
			r := proto.NewReader(bytes.NewReader(tt.stream), tt.max)
			var got []string
			var err error
			for {
				var p []byte
				if p, err = r.ReadFrame(); err != nil {
					break
				}
				got = append(got, string(p))
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("frames = %q, want %q", got, tt.want)
			}
			var fe *proto.FrameError
			if err != io.EOF && !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FrameError", err)
			}
		})
	}
}

// R5: the reader must not wait for the body of an oversized frame: the stream below
// never delivers one, so a reader that waited would block forever.
func TestOversizedDoesNotWaitForBody(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() { _, _ = pw.Write(header(limits.MaxFrameSize + 1)) }()
	_, err := proto.NewReader(pr, 0).ReadFrame()
	if !errors.Is(err, proto.ErrFrameTooLarge) {
		t.Fatalf("err = %v", err)
	}
	pw.Close()
}

func TestFinishFrame(t *testing.T) {
	// R4: a sender never sends an empty frame.
	if _, err := proto.FinishFrame(proto.BeginFrame(nil), 0); !errors.Is(err, proto.ErrFrameEmpty) {
		t.Fatalf("empty: %v", err)
	}
	// R3: nor one above the cap.
	big := append(proto.BeginFrame(nil), strings.Repeat("x", 11)...)
	if _, err := proto.FinishFrame(big, 10); !errors.Is(err, proto.ErrFrameTooLarge) {
		t.Fatalf("big: %v", err)
	}
	f, err := proto.FinishFrame(append(proto.BeginFrame(nil), `{}`...), 0)
	if err != nil || !bytes.Equal(f, frame(`{}`)) {
		t.Fatalf("frame = %x, %v", f, err)
	}
	two, err := proto.AppendFrame(frame(`{}`), []byte(`{"x":1}`), 0, false)
	if err != nil || !bytes.Equal(two, append(frame(`{}`), frame(`{"x":1}`)...)) {
		t.Fatalf("AppendFrame = %x, %v", two, err)
	}
	for _, c := range []struct {
		name       string
		payload    []byte
		max        int
		allowEmpty bool
		want       error
	}{
		{"empty", nil, 0, false, proto.ErrFrameEmpty},
		{"empty allowed", nil, 0, true, nil},
		{"over the cap", []byte(`{"x":1}`), 6, false, proto.ErrFrameTooLarge},
		{"at the cap", []byte(`{"x":1}`), 7, false, nil},
		{"above the protocol cap", make([]byte, limits.MaxFrameSize+1), limits.MaxFrameSize + 2, false, nil},
	} {
		dst := frame(`{}`)
		got, err := proto.AppendFrame(dst, c.payload, c.max, c.allowEmpty)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: AppendFrame error %v, want %v", c.name, err, c.want)
		}
		if c.want != nil && !bytes.Equal(got, dst) {
			t.Errorf("%s: a refused AppendFrame returned %x, not dst as it was", c.name, got)
		}
		if c.want == nil && len(got) != len(dst)+4+len(c.payload) {
			t.Errorf("%s: AppendFrame appended %d bytes, want %d", c.name, len(got)-len(dst), 4+len(c.payload))
		}
	}
}

// R6, R53: a length prefix that reads as text — text written where frames belong — is
// named in the frame error, whether the text filled the header or ended inside it; a
// binary prefix is not.
func TestFrameErrorReadsAsText(t *testing.T) {
	for _, c := range []struct {
		name, in string
		text     string // "" when no hint is expected
		sentinel error
	}{
		{"R5", "hello\n", "hell", proto.ErrFrameTooLarge},
		{"R1", "hi\n", "hi\n", proto.ErrFrameTruncated},
		{"R5", "{\"type\":1}", "{\"ty", proto.ErrFrameTooLarge},
		{"R4", "\x00\x00\x00\x00", "", proto.ErrFrameEmpty},
		{"R5", "\xff\xff\xff\xff", "", proto.ErrFrameTooLarge},
		{"R1", "\x00\x00", "", proto.ErrFrameTruncated},
	} {
		_, err := proto.NewReader(strings.NewReader(c.in), 0).ReadFrame()
		var fe *proto.FrameError
		if !errors.As(err, &fe) || !errors.Is(err, c.sentinel) {
			t.Fatalf("%s %q: error %v, want %v", c.name, c.in, err, c.sentinel)
		}
		got, ok := fe.Text()
		hinted := strings.Contains(err.Error(), "reads as text") && strings.Contains(err.Error(), "something printed to stdout?")
		if c.text == "" {
			if ok || hinted {
				t.Errorf("%s %q: hint given for a binary prefix: %v", c.name, c.in, err)
			}
			continue
		}
		if !ok || got != c.text || !hinted || !strings.Contains(err.Error(), strconv.Quote(c.text)) {
			t.Errorf("%s %q: Text() = %q, %v; error %q", c.name, c.in, got, ok, err)
		}
	}
}

// pausingReader returns its stream in the pieces given, with a read deadline error
// (as an *os.File with a passed read deadline returns it) between them.
type pausingReader struct {
	pieces [][]byte
	pause  bool
}

func (r *pausingReader) Read(p []byte) (int, error) {
	if r.pause {
		r.pause = false
		return 0, &os.PathError{Op: "read", Path: "|0", Err: os.ErrDeadlineExceeded}
	}
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	if r.pieces[0] = r.pieces[0][n:]; len(r.pieces[0]) == 0 {
		r.pieces = r.pieces[1:]
		r.pause = true
	}
	return n, nil
}

// A reader whose read deadline passes in the middle of a frame (a host's caller that
// stops reading when its context ends) is told so, and the next ReadFrame continues
// the frame where it stopped: nothing is lost or read twice, wherever the pause falls.
func TestReadFrameContinuesAfterDeadline(t *testing.T) {
	small := append(header(3), "abc"...)
	big := append(header(2000), bytes.Repeat([]byte{'x'}, 2000)...)
	for _, tt := range []struct {
		name   string
		stream []byte
		want   []string
	}{
		{"small frames", append(append([]byte{}, small...), small...), []string{"abc", "abc"}},
		{"large frame read directly", append(append([]byte{}, big...), small...), []string{strings.Repeat("x", 2000), "abc"}},
	} {
		for cut := 0; cut <= len(tt.stream); cut++ {
			r := proto.NewReader(&pausingReader{pieces: [][]byte{tt.stream[:cut], tt.stream[cut:]}}, 0)
			var got []string
			pauses := 0
			for {
				p, err := r.ReadFrame()
				if err == io.EOF {
					break
				}
				if errors.Is(err, os.ErrDeadlineExceeded) {
					var fe *proto.FrameError
					if errors.As(err, &fe) {
						t.Fatalf("%s cut %d: a deadline is reported as a frame error: %v", tt.name, cut, err)
					}
					if pauses++; pauses > 3 {
						t.Fatalf("%s cut %d: no progress", tt.name, cut)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s cut %d: %v", tt.name, cut, err)
				}
				got = append(got, string(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("%s cut %d: frames %.20q, want %.20q", tt.name, cut, got, tt.want)
			}
		}
	}
}
