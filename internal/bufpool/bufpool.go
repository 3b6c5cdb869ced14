// Package bufpool holds the byte buffers frames and params are built in, on both ends
// of a connection, so that a steady stream of calls, small or as large as a frame may
// be, allocates no buffers: every large call otherwise leaves a buffer of its size to
// the garbage collector, and with a megabyte per call that is a collection every few
// calls.
//
// It is in the module's shared layer (internal/) and imports only limits; runtime,
// plugin and registry draw from it.
//
// Buffers up to SmallCap are pooled in one pool and handed out by default. Larger ones
// (up to MaxCap, a whole frame) are pooled apart and handed out only to a caller that
// expects a large value: a [Hint] remembers, per call site or method, how large the
// last value was. Both pools are sync.Pools, so buffers nobody uses are released within
// two garbage collections.
//
// A sync.Pool alone does not keep large buffers through a stream of large calls: each
// such call leaves garbage of its own size (the frame read, whose bytes the decoded
// strings share), so the collector runs every call or two and empties the pools as
// often, and the next call allocates (and the kernel faults in) a new buffer of a
// megabyte or more. So the last few large buffers put back are also held strongly, up to
// heldMax of them, and let go when no large buffer was asked for during heldIdle:
// memory a burst of large calls used is kept while they go on, not after.
package bufpool

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/limits"
)

const (
	// SmallCap is the largest buffer of the small pool; a value up to this size never
	// asks for a large buffer.
	SmallCap = 64 << 10
	// MaxCap is the largest buffer kept: a frame of the protocol's largest payload and
	// its header, with room for an envelope around a value that large.
	MaxCap = limits.MaxFrameSize + limits.FrameHeaderSize + 4<<10

	smallNew = 512

	// heldMax is how many large buffers are held beyond the collector's reach: as many
	// as a call in flight uses at once on either end (a host's params and its
	// connection's write queue; an adapter's reply frame).
	heldMax = 2
)

// heldIdle is how long held buffers outlive the last request for a large buffer (a
// variable for the tests, read and written under held.mu).
var heldIdle = 2 * time.Second

// held is the list of large buffers kept from one large request to the next.
var held struct {
	mu    sync.Mutex
	bufs  [heldMax]*[]byte
	n     int
	used  bool        // a large buffer was asked for since the timer last fired
	timer *time.Timer // armed while bufs holds anything
}

// hold keeps b if there is room, or if it is larger than the smallest held buffer (which
// then goes to the sync.Pool instead); it returns the buffer that was not kept, or nil.
func hold(b *[]byte) *[]byte {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.n < heldMax {
		held.bufs[held.n] = b
		held.n++
		if held.timer == nil {
			held.timer = time.AfterFunc(heldIdle, release)
		} else if held.n == 1 {
			held.timer.Reset(heldIdle)
		}
		return nil
	}
	least := 0
	for i := 1; i < held.n; i++ {
		if cap(*held.bufs[i]) < cap(*held.bufs[least]) {
			least = i
		}
	}
	if cap(*b) <= cap(*held.bufs[least]) {
		return b
	}
	b, held.bufs[least] = held.bufs[least], b
	return b
}

// take returns a held buffer of at least need bytes' capacity, or nil, and notes that
// large buffers are in use.
func take(need int) *[]byte {
	held.mu.Lock()
	defer held.mu.Unlock()
	held.used = true
	for i := 0; i < held.n; i++ {
		if b := held.bufs[i]; cap(*b) >= need {
			held.n--
			held.bufs[i], held.bufs[held.n] = held.bufs[held.n], nil
			return b
		}
	}
	return nil
}

// release runs heldIdle after the list was last armed: it lets the held buffers go
// unless a large buffer was asked for meanwhile, in which case it looks again later.
func release() {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.n == 0 {
		held.used = false
		return // re-armed by the next hold
	}
	if held.used {
		held.used = false
		held.timer.Reset(heldIdle)
		return
	}
	clear(held.bufs[:])
	held.n = 0
}

var (
	small = sync.Pool{New: func() any { b := make([]byte, 0, smallNew); return &b }}
	large sync.Pool // *[]byte with SmallCap < cap <= MaxCap
)

// Get returns an empty buffer from the small pool.
func Get() *[]byte { return small.Get().(*[]byte) }

// Put returns a buffer to the pool its capacity belongs to, emptied; a buffer above
// MaxCap is left to the garbage collector. The caller must not use b afterwards.
func Put(b *[]byte) {
	switch c := cap(*b); {
	case c <= SmallCap:
		*b = (*b)[:0]
		small.Put(b)
	case c <= MaxCap:
		*b = (*b)[:0]
		if b = hold(b); b != nil {
			large.Put(b)
		}
	}
}

// Reserve returns b with room for at least n more bytes: b itself when it has the room
// or n is small, else b's contents copied into a large pooled buffer (or a new one) with
// some slack beyond n. The array b had is then no longer used by the caller; it is not
// returned to any pool (it may be a part of a frame someone else still reads).
func Reserve(b []byte, n int) []byte {
	if n <= cap(b)-len(b) || n <= SmallCap {
		return b
	}
	// Some slack, so that a value a little larger than the last, or the few bytes
	// that close a frame, do not move it again; never beyond MaxCap for the slack.
	need := len(b) + n + n/16 + 64
	if need > MaxCap {
		need = max(MaxCap, len(b)+n+64)
	}
	if p := take(need); p != nil {
		return append((*p)[:0], b...)
	}
	if p, ok := large.Get().(*[]byte); ok {
		if cap(*p) >= need {
			return append((*p)[:0], b...)
		}
		large.Put(p) // too small for this one; another caller may use it
	}
	return append(make([]byte, 0, need), b...)
}

// Hint remembers how large the values of one call site were lately, so that the next
// one can start in a buffer large enough ([Reserve]) instead of growing a small one.
// The zero Hint expects small values. Safe for concurrent use.
type Hint struct{ n atomic.Int64 }

// Size is the size the next value is expected to have: 0 when the last one was small.
func (h *Hint) Size() int { return int(h.n.Load()) }

// Record notes the size of a value just built.
func (h *Hint) Record(size int) {
	if size <= SmallCap {
		size = 0
	}
	if int(h.n.Load()) != size {
		h.n.Store(int64(size))
	}
}

// Buffer is a pooled buffer seen as what a frame writer releases once it wrote the
// frame the buffer holds: (*Buffer)(b) of a buffer b from [Get] puts b back on Release.
type Buffer []byte

// Release puts the buffer back into the pool ([Put]); it must not be used afterwards.
func (b *Buffer) Release() { Put((*[]byte)(b)) }
