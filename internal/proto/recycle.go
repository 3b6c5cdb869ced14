package proto

import (
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Large frames are recycled once nothing references them. A frame ReadFrame returns is
// its caller's for good: decoded strings and json.RawMessage values share its memory,
// and whoever holds one of them may keep it as long as they like, so no code can say
// when a frame is free. The garbage collector can: a large frame carries a finalizer,
// which runs only once no pointer into the frame is left anywhere, and which puts the
// frame's memory on a short list for the next large frame instead of letting it go.
//
// Without it, a process that receives large frames back to back allocates a fresh one
// each time: the runtime clears it, and once the collector has given the pages of the
// previous ones back to the kernel, touches every page again (one page fault per 4 KiB,
// about a thousand for a frame of 4 MiB). A recycled frame is neither cleared (its
// bytes are all read from the stream) nor faulted in again.
const (
	// recycleMin is the smallest frame that is recycled: below it a fresh allocation
	// comes from the runtime's size classes and costs little.
	recycleMin = 128 << 10
	// recycleKeep is how many free frames are kept: as many as a process receiving
	// large frames back to back on a connection or two has between two collections.
	recycleKeep = 4
)

// recycleIdle is how long free frames are kept after the last large frame was asked
// for; then they are left to the collector, so that a process that stopped receiving
// large frames does not keep their memory.
var recycleIdle = 2 * time.Second

var recycled struct {
	mu    sync.Mutex
	free  [recycleKeep][]byte // len == cap
	n     int
	caps  map[uintptr]int // capacity of every frame handed out that carries the finalizer
	used  bool            // a large frame was asked for since the timer last fired
	timer *time.Timer     // armed while free holds anything
}

// newFrame returns a slice of n bytes for a frame's payload, which the caller owns: a
// fresh one, or for a large frame possibly one whose previous owner is gone, so its
// contents are unspecified (the caller overwrites all n bytes).
func newFrame(n int) []byte {
	if n < recycleMin {
		return make([]byte, n)
	}
	recycled.mu.Lock()
	defer recycled.mu.Unlock()
	recycled.used = true
	var p []byte
	best := -1
	for i := range recycled.n {
		if c := cap(recycled.free[i]); c >= n && (best < 0 || c < cap(recycled.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		p = recycled.free[best]
		recycled.n--
		recycled.free[best], recycled.free[recycled.n] = recycled.free[recycled.n], nil
	} else {
		p = make([]byte, n)
	}
	if recycled.caps == nil {
		recycled.caps = make(map[uintptr]int)
	}
	base := unsafe.SliceData(p)
	recycled.caps[uintptr(unsafe.Pointer(base))] = cap(p)
	runtime.SetFinalizer(base, recycleFrame)
	return p[:n:n]
}

// recycleFrame runs, on the runtime's finalizer goroutine, once nothing references the
// frame that starts at base: it keeps the frame's memory for a later one, or lets it go
// when enough are kept.
func recycleFrame(base *byte) {
	recycled.mu.Lock()
	defer recycled.mu.Unlock()
	key := uintptr(unsafe.Pointer(base))
	c, ok := recycled.caps[key]
	delete(recycled.caps, key)
	if !ok {
		return
	}
	frame := unsafe.Slice(base, c)
	if recycled.n == recycleKeep {
		// Keep the larger frames: a smaller one would never serve the large frames
		// that come now. The one let go gets no finalizer again: the collector frees it.
		least := 0
		for i := 1; i < recycled.n; i++ {
			if cap(recycled.free[i]) < cap(recycled.free[least]) {
				least = i
			}
		}
		if cap(recycled.free[least]) < c {
			recycled.free[least] = frame
		}
		return
	}
	recycled.free[recycled.n] = frame
	recycled.n++
	if recycled.timer == nil {
		recycled.timer = time.AfterFunc(recycleIdle, releaseFrames)
	} else if recycled.n == 1 {
		recycled.timer.Reset(recycleIdle)
	}
}

// releaseFrames runs recycleIdle after the timer was last armed: it lets the free
// frames go unless a large frame was asked for meanwhile, in which case it looks again
// later.
func releaseFrames() {
	recycled.mu.Lock()
	defer recycled.mu.Unlock()
	if recycled.n == 0 {
		recycled.used = false
		return // armed again by the next recycled frame
	}
	if recycled.used {
		recycled.used = false
		recycled.timer.Reset(recycleIdle)
		return
	}
	clear(recycled.free[:])
	recycled.n = 0
}
