// Package handover defines the call a typed client hands down to a connection: one
// [Request] value, passed as an argument through every layer between them
// (registry.Handle.Do, lifecycle.Supervisor.Do, runtime.Conn.Do), that says what a
// plain Call cannot — who owns the params' buffer and whether they need checking — and
// carries back what the connection learnt of the result.
//
// Only code inside this module can import an internal package, so only it can build a
// Request: no caller outside it can pass params nobody checked as checked, or lend a
// buffer the pool does not own. The exported Do methods take a *Request for that
// reason (the pattern of protobuf-go's ProtoMethods): their parameter type is one
// only this module can construct.
package handover

import (
	"encoding/json"
	"sync/atomic"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// Request is one call as the typed client makes it. The caller fills Method, Params,
// Lease and Valid; the connection that answers fills Long.
type Request struct {
	// Method is the method called.
	Method string
	// Params are the call's params, one JSON object (nil means {}).
	Params json.RawMessage
	// Lease, if not nil, lends Params' pooled buffer to the connection: it writes a
	// large request's frame from Params instead of copying them into its write queue,
	// holding the lease until that frame is written or dropped (see [Lease]).
	Lease *Lease
	// Valid says Params were written by the codec for a type whose encoding is always
	// one valid JSON object (jsoncodec.WritesValid): the connection does not check them
	// again (the check costs a pass over every byte).
	Valid bool
	// Long is set by the connection when the call returns a result: where the
	// result's long strings lie, as the envelope decoder found them checking the reply
	// frame (proto.Message.Strings), for the caller to hand to jsoncodec.DecodeOwned.
	// It is nil for a result without long strings and after an error.
	Long []proto.LongString
}

// Lease is a pooled buffer (package bufpool) that holds a caller's large params, shared
// between the caller and every connection that queued a frame referring to them.
//
// The caller holds the lease from [Lend] until its call has returned; a connection
// holds it ([Lease.Hold]) from queueing such a frame until its writer has written or
// dropped it. So a call given up while its frame is being written leaves the buffer to
// the writer, and a request dropped by a connection that ended before writing it can be
// made again from the same params on a new connection, because the caller still holds
// them. The buffer returns to its pool in one place, [Lease.Release].
type Lease struct {
	buf  *[]byte
	refs atomic.Int32
}

// Lend returns a lease of buf (taken from bufpool), held once, by the caller: it
// calls Release when its call has returned and must not use buf afterwards. It costs
// an allocation: callers lend large params, where the copy it spares costs far more.
func Lend(buf *[]byte) *Lease {
	l := &Lease{buf: buf}
	l.refs.Store(1)
	return l
}

// Hold is called by a connection, in the caller's goroutine while the caller holds the
// lease, when it queues a frame that refers to the leased bytes; its writer releases
// that hold once the frame is written or dropped.
func (l *Lease) Hold() { l.refs.Add(1) }

// Release lets go of one hold. The rule: the buffer goes back to the pool when the last
// holder lets go, here and nowhere else; releasing more often than held panics.
func (l *Lease) Release() {
	switch n := l.refs.Add(-1); {
	case n == 0:
		bufpool.Put(l.buf)
	case n < 0:
		panic("handover: a lease released more often than held")
	}
}

// Holders returns how many hold the lease now.
func (l *Lease) Holders() int { return int(l.refs.Load()) }
