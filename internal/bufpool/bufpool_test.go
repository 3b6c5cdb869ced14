package bufpool

import (
	"bytes"
	"testing"
)

// Reserve keeps the contents, gives the room asked for, and leaves small requests in
// the buffer they came with.
func TestReserve(t *testing.T) {
	b := append(*Get(), "head"...)
	if got := Reserve(b, 100); &got[0] != &b[0] {
		t.Fatal("a small request moved the buffer")
	}
	got := Reserve(b, 1<<20)
	if !bytes.Equal(got, []byte("head")) || cap(got)-len(got) < 1<<20 {
		t.Fatalf("Reserve(head, 1 MiB): %q, room %d", got, cap(got)-len(got))
	}
	// A large buffer put back is handed out again to a large request.
	got = append(got, bytes.Repeat([]byte("x"), 1<<20)...)
	p := &got
	Put(p)
	again := Reserve(nil, 1<<20)
	if cap(again) < 1<<20 {
		t.Fatalf("cap %d", cap(again))
	}
	// A frame as large as the protocol allows still has room for its closing bytes.
	near := Reserve([]byte("head"), MaxCap-4<<10)
	if cap(near)-len(near) < MaxCap-4<<10+1 {
		t.Fatalf("no slack: room %d", cap(near)-len(near))
	}
	// Too large a request is still served, exactly.
	huge := Reserve([]byte("h"), MaxCap)
	if len(huge) != 1 || cap(huge) < MaxCap+1 {
		t.Fatalf("len %d cap %d", len(huge), cap(huge))
	}
}

func TestHint(t *testing.T) {
	var h Hint
	if h.Size() != 0 {
		t.Fatal("zero hint expects a value")
	}
	h.Record(100)
	if h.Size() != 0 {
		t.Fatal("a small value made a hint")
	}
	h.Record(1 << 20)
	if h.Size() != 1<<20 {
		t.Fatalf("hint %d", h.Size())
	}
	h.Record(10)
	if h.Size() != 0 {
		t.Fatal("a small value did not reset the hint")
	}
}

// Put leaves a buffer above MaxCap to the collector; Get never returns a large one.
func TestPutBounds(t *testing.T) {
	b := make([]byte, 0, MaxCap+1)
	Put(&b)
	for range 10 {
		if g := Get(); cap(*g) > SmallCap {
			t.Fatalf("Get returned cap %d", cap(*g))
		}
	}
}
