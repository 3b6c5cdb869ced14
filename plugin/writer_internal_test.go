package plugin

import (
	"bytes"
	"testing"
	"time"
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
