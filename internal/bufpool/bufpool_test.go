package bufpool

import (
	"bytes"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/testkit"
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

// heldCount is how many buffers the held list has.
func heldCount() int {
	held.mu.Lock()
	defer held.mu.Unlock()
	return held.n
}

// Large buffers put back survive garbage collections while large buffers are asked for
// (a sync.Pool alone empties at every second one), and are let go once nobody asks for
// one during heldIdle.
func TestHeldThroughCollections(t *testing.T) {
	setIdle := func(d time.Duration) time.Duration { // under the lock the timer reads it with
		held.mu.Lock()
		defer held.mu.Unlock()
		old := heldIdle
		heldIdle = d
		return old
	}
	old := setIdle(50 * time.Millisecond)
	t.Cleanup(func() { setIdle(old) })
	for take(0) != nil { // what earlier tests left
	}
	a, b := make([]byte, 0, 2<<20), make([]byte, 0, 2<<20)
	Put(&a)
	Put(&b)
	runtime.GC()
	runtime.GC()
	runtime.GC()
	for _, want := range [][]byte{a, b} {
		got := Reserve(nil, 1<<20)
		if cap(got) != cap(want) || unsafe.SliceData(got) != unsafe.SliceData(a) && unsafe.SliceData(got) != unsafe.SliceData(b) {
			t.Fatalf("after three collections Reserve returned a new buffer (cap %d)", cap(got))
		}
	}
	// A third large buffer: the list is full, the smaller one goes to the sync.Pool.
	Put(&a)
	Put(&b)
	c := make([]byte, 0, 3<<20)
	Put(&c)
	if got := Reserve(nil, 2<<20+1); unsafe.SliceData(got) != unsafe.SliceData(c) {
		t.Fatal("the largest buffer put back was not held")
	}
	// Idle: released, within a bounded wait.
	testkit.Eventually(t, 10*time.Second, func() bool { return heldCount() == 0 }, "buffers still held after the last large request")
	// And held again on the next Put: the timer re-arms.
	Put(&c)
	if heldCount() != 1 {
		t.Fatalf("held %d after a Put", heldCount())
	}
	testkit.Eventually(t, 10*time.Second, func() bool { return heldCount() == 0 }, "not released after re-arming")
}
