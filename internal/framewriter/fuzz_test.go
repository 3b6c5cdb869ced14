package framewriter

import (
	"bytes"
	"context"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// FuzzRoundTrip writes frames described by the input through a Writer — each copied,
// built in place, or cut into spliced parts written by reference, flushed by the
// producer or left for the write goroutine, with random batch and copy limits — and
// reads the output back with the protocol's frame reader: the payloads must come back
// exactly, in order, and every borrowed part be released once.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x10\x20hello\x05\x40world"), uint16(64), uint16(8))
	f.Add(bytes.Repeat([]byte{0xff, 0x03, 0x81}, 50), uint16(1), uint16(1))
	f.Add([]byte{}, uint16(0), uint16(0))
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, data []byte, batch, copyMax uint16) {
	{
		var out bytes.Buffer
		w := New(&out, Config{Batch: int(batch), CopyMax: int(copyMax)})
		var rel counter
		lent := int32(0)
		var want [][]byte
		for len(data) > 0 {
			ctl := data[0]
			data = data[1:]
			n := int(ctl&0x3f) * 7
			n = min(n, len(data))
			payload := bytes.Clone(data[:n])
			data = data[n:]
			if len(payload) == 0 {
				payload = []byte{ctl}
			}
			want = append(want, payload)
			fb, err := proto.FinishFrame(append(proto.BeginFrame(nil), payload...), 0)
			if err != nil {
				t.Fatal(err)
			}
			switch ctl >> 6 {
			case 0:
				w.Queue(fb, nil, 0, nil)
			case 1: // cut into parts by reference
				var parts []Splice
				text := []byte{}
				for i := 0; i < len(fb); i += 3 {
					text = append(text, fb[i])
					if j := min(i+3, len(fb)); j > i+1 {
						parts = append(parts, Splice{At: len(text), Data: fb[i+1 : j]})
					}
				}
				lent++
				w.Queue(text, parts, 0, &rel)
			case 2: // tagged, its second half by reference
				mid := len(fb) / 2
				lent++
				w.Queue(fb[:mid], []Splice{{At: mid, Data: fb[mid:]}}, uint64(len(want)), &rel)
			case 3:
				w.Queue(fb, nil, uint64(len(want)), nil)
				w.Kick()
				continue
			}
			if ctl&0x40 != 0 {
				if err := w.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		w.Close()
		<-w.Done()
		r := proto.NewReader(&out, 0)
		for i, p := range want {
			got, err := r.ReadFrame()
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if !bytes.Equal(got, p) {
				t.Fatalf("frame %d: %q, want %q", i, got, p)
			}
		}
		if _, err := r.ReadFrame(); err == nil {
			t.Fatal("more frames than written")
		}
		if rel.n.Load() != lent {
			t.Fatalf("%d releases, want %d", rel.n.Load(), lent)
		}
	}
}
