// Package bufpool holds the byte buffers frames and params are built in, on both ends
// of a connection, so that a steady stream of calls, small or as large as a frame may
// be, allocates no buffers: every large call otherwise leaves a buffer of its size to
// the garbage collector, and with a megabyte per call that is a collection every few
// calls.
//
// Buffers up to SmallCap are pooled in one pool and handed out by default. Larger ones
// (up to MaxCap, a whole frame) are pooled apart and handed out only to a caller that
// expects a large value: a [Hint] remembers, per call site or method, how large the
// last value was. Both pools are sync.Pools, so buffers nobody uses are released within
// two garbage collections.
package bufpool

import (
	"sync"
	"sync/atomic"

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
)

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
		large.Put(b)
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
