package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The writer's goroutine starts only for a frame that nobody writes at once (one the
// read loop queues); replies that their handlers write leave it unstarted, and close
// then has nothing to wait for.
func TestWriterLoopStartsOnDemand(t *testing.T) {
	frame := func(s string) *[]byte { b := append(*getFrame(), s...); return &b }
	tests := []struct {
		name        string
		queue       bool // a frame from the read loop too
		wantLooping bool
	}{
		{name: "handler replies only", wantLooping: false},
		{name: "a frame from the read loop", queue: true, wantLooping: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := newWriter(&out, 1<<20)
			w.reply(frame("one"))
			w.reply(frame("two"))
			if tt.queue {
				w.enqueue(frame("three"))
			}
			w.mu.Lock()
			looping := w.looping
			w.mu.Unlock()
			if looping != tt.wantLooping {
				t.Errorf("loop started: %v, want %v", looping, tt.wantLooping)
			}
			w.close()
			select {
			case <-w.done:
			case <-time.After(10 * time.Second):
				t.Fatal("done not closed after close")
			}
			want := "onetwo"
			if tt.queue {
				want += "three"
			}
			if out.String() != want {
				t.Errorf("written %q, want %q", out.String(), want)
			}
		})
	}
}

// A result's strings longer than a batched frame are not copied into the frame: they
// are spliced in, by reference; shorter ones are copied.
func TestAppendResultSplicesLongStrings(t *testing.T) {
	long := strings.Repeat("x", smallFrame)
	type two struct{ L, S string }
	text, parts, err := appendResult(nil, two{L: long, S: "short"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(text) != `{"L":"","S":"short"}` || len(parts) != 1 || parts[0].At != len(`{"L":"`) ||
		unsafe.SliceData(parts[0].Data) != unsafe.StringData(long) {
		t.Fatalf("text %q, %d parts", text, len(parts))
	}
}
