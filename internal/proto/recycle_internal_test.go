package proto

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// largeFrameStream returns a stream of frames whose payloads are size bytes of fill[i].
func largeFrameStream(size int, fill ...byte) *bytes.Reader {
	var b bytes.Buffer
	for _, c := range fill {
		var h [4]byte
		binary.BigEndian.PutUint32(h[:], uint32(size))
		b.Write(h[:])
		b.Write(bytes.Repeat([]byte{c}, size))
	}
	return bytes.NewReader(b.Bytes())
}

// freeFrames returns how many frames wait on the free list.
func freeFrames() int {
	recycled.mu.Lock()
	defer recycled.mu.Unlock()
	return recycled.n
}

// collectUntil runs the collector until cond holds (finalizers run on their own
// goroutine after a collection), failing after a while.
func collectUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s of collections: %s", what)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// A large frame nothing references any more lends its memory to the next one; one that
// is still referenced, even by a small part of it, is never reused; the free frames are
// let go once large frames stop coming.
func TestLargeFramesRecycled(t *testing.T) {
	old := recycleIdle
	recycleIdle = 50 * time.Millisecond
	defer func() { recycleIdle = old }()
	releaseAll := func() {
		recycled.mu.Lock()
		clear(recycled.free[:])
		recycled.n = 0
		recycled.mu.Unlock()
	}
	releaseAll()
	defer releaseAll()

	const size = 1 << 20
	r := NewReader(largeFrameStream(size, 'a', 'b', 'c', 'd'), 0)
	first, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != size || cap(first) != size || first[0] != 'a' || first[size-1] != 'a' {
		t.Fatalf("first frame: len %d cap %d, wrong bytes", len(first), cap(first))
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(first)))
	kept := first[size/2 : size/2+16] // a reference into the frame keeps all of it
	first = nil
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if n := freeFrames(); n != 0 {
		t.Fatalf("a frame still referenced went to the free list (%d free)", n)
	}
	second, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if got := uintptr(unsafe.Pointer(unsafe.SliceData(second))); got == base {
		t.Fatal("the second frame reuses the memory of one still referenced")
	}
	if !bytes.Equal(kept, bytes.Repeat([]byte{'a'}, 16)) || second[0] != 'b' {
		t.Fatalf("kept part %q, second frame starts %q", kept, second[0])
	}

	base = uintptr(unsafe.Pointer(unsafe.SliceData(second)))
	second = nil
	collectUntil(t, "the unreferenced frame never reached the free list", func() bool { return freeFrames() > 0 })
	third, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if got := uintptr(unsafe.Pointer(unsafe.SliceData(third))); got != base {
		t.Errorf("the third frame did not reuse the unreferenced second frame's memory")
	}
	if len(third) != size || cap(third) != size || !bytes.Equal(third, bytes.Repeat([]byte{'c'}, size)) {
		t.Fatalf("third frame: len %d cap %d, not all 'c'", len(third), cap(third))
	}
	if !bytes.Equal(kept, bytes.Repeat([]byte{'a'}, 16)) {
		t.Fatalf("the part of the first frame still referenced changed: %q", kept)
	}
	runtime.KeepAlive(kept) // referenced until here: the first frame is never free
	third = nil
	collectUntil(t, "the third frame never reached the free list", func() bool { return freeFrames() > 0 })
	// Nothing asks for a large frame now: after recycleIdle (twice at most, as the
	// last request re-arms the timer once), the free list is emptied.
	deadline := time.Now().Add(10 * time.Second)
	for freeFrames() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("free frames were kept although no large frame was asked for")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Small frames are ordinary allocations: no finalizer, nothing on the list.
func TestSmallFramesNotRecycled(t *testing.T) {
	r := NewReader(largeFrameStream(recycleMin-1, 'x'), 0)
	p, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	recycled.mu.Lock()
	_, tracked := recycled.caps[uintptr(unsafe.Pointer(unsafe.SliceData(p)))]
	recycled.mu.Unlock()
	if tracked {
		t.Fatal("a frame below recycleMin carries the recycling finalizer")
	}
}
