// Package validjson holds what the module's own layers hand each other about a JSON
// text known to be valid, so that it is not checked a second time: a frame's params or
// result value, which the envelope decoder checked whole (UTF-8 and escapes included),
// and params that the codec wrote from a type whose encoding is always valid JSON. It
// holds types and hand-over points, not an implementation: the decoder and encoder that
// use them are package internal/jsoncodec's (DecodeOwned, AppendSpliced, WritesValid),
// which its users call directly, and which imports this package, never the other way.
// Only code inside this module can import an internal package, so no caller outside it
// can pass a text nobody checked as checked.
//
// It also hands over what lets a large value reach the pipe without being copied on
// the way: a typed client lends its encoded params with their pooled buffer to the
// connection (Lend), and the codec writes long strings by reference (Splice), which the
// adapter SDK uses for results. A lent buffer has holders (the caller, and every
// connection that queued a frame of it) and returns to the pool in one place,
// [Loan.Release], when the last of them lets go.
//
// The loan and the result's string notes travel in the call's context (Lend,
// ExpectStrings), not as arguments, because between the typed client (package registry)
// and the connection (package runtime) the call passes through exported methods whose
// signature is the public API (lifecycle.Supervisor.Call, runtime.Conn.Call): carrying
// them as arguments would add an exported method per layer whose parameter only this
// module can fill. Both measure (BENCH.md, "What the large-value hand-overs are worth"):
// without them a typed 3.9 MiB call ran at 0.74–0.87 of the raw one, with them at
// 0.93–1.03. A context that carries no loan, or a loan for other bytes, changes nothing:
// Lent and Strings.For match the exact bytes.
package validjson

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// Known is what the envelope decoder learnt of a validated text's long strings, for its
// decoder, and what the decoder learnt of the strings it made, for an encoder.
type Known struct {
	// Long are the text's long strings (proto.Message.Strings).
	Long []proto.LongString
	// Verbatim are the contents of strings of the text, shared by values decoded from
	// it, that the codec would write exactly as they are (proto.Verbatim): an
	// encoder splices a string that lies within one, on rune boundaries, without
	// checking it again.
	Verbatim [][]byte
}

type loanKey struct{}

// Loan is a caller's large params handed to the connection together with the pooled
// buffer (package bufpool) that holds them: the connection writes the request's frame
// from them instead of copying them into its write queue.
//
// The buffer goes back to the pool in exactly one place, [Loan.Release], when the last
// holder lets it go: the caller holds the loan from Lend until the call has returned,
// and every connection that queues a frame referring to the params holds it (Hold)
// until its writer has written or dropped that frame. So a call given up while its
// frame is being written leaves the buffer to the writer, and a request dropped by a
// connection that ended before writing it can be made again from the same params, on
// a new connection, because the caller still holds them.
type Loan struct {
	p     *byte
	n     int
	valid bool
	buf   *[]byte
	refs  atomic.Int32
}

// Lend returns a context that lends params, which are *buf (a bufpool buffer), to the
// connection the call reaches, and the Loan, held once by the caller: it calls Release
// when the call has returned and must not use buf afterwards. valid says params were
// written by the codec for a type jsoncodec.WritesValid accepts (see Valid). It costs an
// allocation: callers use it for large params, where the copy it spares costs far more.
func Lend(ctx context.Context, params []byte, buf *[]byte, valid bool) (context.Context, *Loan) {
	l := &Loan{p: unsafe.SliceData(params), n: len(params), valid: valid, buf: buf}
	l.refs.Store(1)
	return context.WithValue(ctx, loanKey{}, l), l
}

// Lent returns the loan ctx carries for exactly params (the same bytes, not a copy), or
// nil.
func Lent(ctx context.Context, params []byte) *Loan {
	l, _ := ctx.Value(loanKey{}).(*Loan)
	if l == nil || len(params) == 0 || l.p != unsafe.SliceData(params) || l.n != len(params) {
		return nil
	}
	return l
}

// Hold is called by a connection, in the caller's goroutine while the caller holds the
// loan, when it queues a frame that refers to the params; it releases it once that
// frame is written or dropped.
func (l *Loan) Hold() { l.refs.Add(1) }

// Release lets go of one hold; the last one puts the buffer back into the pool. This
// is the only place a lent buffer returns to the pool.
func (l *Loan) Release() {
	switch n := l.refs.Add(-1); {
	case n == 0:
		bufpool.Put(l.buf)
	case n < 0:
		panic("validjson: a loan released more often than held")
	}
}

// Holders returns how many hold the loan now.
func (l *Loan) Holders() int { return int(l.refs.Load()) }

// Valid reports whether the lent params were written by the codec for a type
// jsoncodec.WritesValid accepts: one valid JSON object, which the connection does not
// check again (the check costs a pass over every byte). l may be nil.
func (l *Loan) Valid() bool { return l != nil && l.valid }

// Splice is a run of bytes that belongs at offset At of an encoded text but was not
// copied into it: the text is written up to At, then Data, then on from At. Data is the
// memory of an immutable Go string (jsoncodec.AppendSpliced writes long strings so); it
// must never be written to.
type Splice = framewriter.Splice

type stringsKey struct{}

// Strings receives from the connection where the long strings of a call's result
// lie, as the envelope decoder found them while checking the reply frame
// (proto.Message.Strings), for the caller to hand to jsoncodec.DecodeOwned.
type Strings struct {
	p    *byte
	n    int
	long []proto.LongString
}

// ExpectStrings returns a context that asks the connection the call reaches for the
// long strings of its result, and where they will be. It costs an allocation: callers
// use it where results were large lately.
func ExpectStrings(ctx context.Context) (context.Context, *Strings) {
	s := &Strings{}
	return context.WithValue(ctx, stringsKey{}, s), s
}

// GiveStrings is called by the connection, in the caller's goroutine, with a call's
// result value and its long strings: a context that expects them keeps them for that
// value. Only a value with long strings is worth the look-up.
func GiveStrings(ctx context.Context, value []byte, long []proto.LongString) {
	if s, _ := ctx.Value(stringsKey{}).(*Strings); s != nil {
		s.p, s.n, s.long = unsafe.SliceData(value), len(value), long
	}
}

// For returns the long strings given for exactly value (the same bytes, not a copy),
// or nil; s may be nil.
func (s *Strings) For(value []byte) []proto.LongString {
	if s == nil || len(value) == 0 || s.p != unsafe.SliceData(value) || s.n != len(value) {
		return nil
	}
	return s.long
}
