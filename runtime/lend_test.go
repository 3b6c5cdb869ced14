package runtime_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/wire"
)

// A call given up while its large params are being written returns at once, and the
// caller's buffer is the caller's again: params lent with their pooled buffer
// (a handover.Lease, as the typed client lends them) are written from that buffer, which
// goes back to the pool only once the frame is written (the caller lets go of the loan,
// the writer still holds it); params without a loan were copied into the write queue
// before Call returned. Either way the caller, or whoever the pool hands the buffer to,
// writes over it, and the frame still goes out whole and unchanged, followed by the
// cancel; the connection goes on.
func TestParamsCanceledMidWrite(t *testing.T) {
	for _, tc := range []struct {
		kind pipeKind
		lend bool
	}{{ioPipe, true}, {osPipe, true}, {ioPipe, false}, {osPipe, false}} {
		t.Run(fmt.Sprintf("%s/lent=%v", tc.kind, tc.lend), func(t *testing.T) {
			c, f := newConn(t, tc.kind, nil)
			f.handshake(c)

			const n = 1 << 20
			buf := bufpool.Get()
			*buf = bufpool.Reserve(*buf, n)
			*buf = append(append(append((*buf)[:0], `{"s":"`...), strings.Repeat("p", n-len(`{"s":""}`))...), `"}`...)
			params := *buf
			want := []byte(request(2, read, string(params)))

			ctx, cancel := context.WithCancel(context.Background())
			req := &handover.Request{Method: read, Params: params}
			if tc.lend {
				req.Lease, req.Valid = handover.Lend(buf), true
			}
			res := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, req)
				res <- err
			}()
			// The frame is being written: its start has arrived, most of it has not.
			var head [4 + 100]byte
			if _, err := io.ReadFull(f.inRaw, head[:]); err != nil {
				t.Fatal(err)
			}
			if got := binary.BigEndian.Uint32(head[:]); int(got) != len(want) || !bytes.Equal(head[4:], want[:100]) {
				t.Fatalf("frame starts %q (length %d), want %q (length %d)", head[4:], got, want[:100], len(want))
			}
			cancel()
			checkOutcome(t, recv(t, res), wire.CodeAborted, true, false)
			// The call has returned: the caller lets go of the loan, as registry.Call
			// does, and another call's params go into any buffer the pool hands out;
			// without a loan the caller writes over its own buffer.
			if req.Lease != nil {
				req.Lease.Release()
			} else {
				copy(params, bytes.Repeat([]byte("Z"), len(params)))
			}
			for range 4 {
				b := bufpool.Reserve(nil, n)
				b = append(b, bytes.Repeat([]byte("Z"), n)...)
				defer bufpool.Put(&b)
			}
			rest := make([]byte, len(want)-100)
			if _, err := io.ReadFull(f.inRaw, rest); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rest, want[100:]) {
				t.Fatalf("the frame changed while it was written (%d bytes differ)", differing(rest, want[100:]))
			}
			if got := string(readFrame(t, f.inRaw)); got != cancelFrame(2) {
				t.Fatalf("after the frame: %s, want the cancel", got)
			}
			done := goCall(context.Background(), c, read, `{}`)
			f.expect(request(3, read, `{}`))
			f.send(resultFrame(3, `{}`))
			if r := recv(t, done); r.err != nil {
				t.Fatalf("the next call: %v", r.err)
			}
		})
	}
}

// Lent params no larger than a caller writes itself are copied into the queue as
// before: no frame holds the loan, only the caller.
func TestSmallLentParamsCopied(t *testing.T) {
	c, f := newConn(t, ioPipe, nil)
	f.handshake(c)
	buf := bufpool.Get()
	*buf = append((*buf)[:0], `{"s":"small"}`...)
	loan := handover.Lend(buf)
	res := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), &handover.Request{Method: read, Params: *buf, Lease: loan, Valid: true})
		res <- err
	}()
	f.expect(request(2, read, `{"s":"small"}`))
	f.send(resultFrame(2, `{}`))
	if err := recv(t, res); err != nil {
		t.Fatal(err)
	}
	if n := loan.Holders(); n != 1 {
		t.Fatalf("small params: %d holders of the loan after the call, want the caller alone", n)
	}
	loan.Release()
}

// readFrame reads one frame from r.
func readFrame(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, binary.BigEndian.Uint32(h[:]))
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func differing(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// Lent params whose request was still queued when the connection ended stay the
// caller's: the call fails never started, and the caller makes it again from the same
// request on a new connection, as package lifecycle does after a restart.
// The request goes out whole and unchanged there, though buffers taken from the pool
// in between were written over (the dropped frame gave up only its own hold).
func TestLentParamsRetriedOnNewConnection(t *testing.T) {
	c1, f1 := newConn(t, ioPipe, nil)
	f1.handshake(c1)

	const n = 1 << 20
	buf := bufpool.Get()
	*buf = bufpool.Reserve(*buf, n)
	*buf = append(append(append((*buf)[:0], `{"s":"`...), strings.Repeat("p", n-len(`{"s":""}`))...), `"}`...)
	params := *buf
	want := request(2, read, string(params))
	loan := handover.Lend(buf)
	req := &handover.Request{Method: read, Params: params, Lease: loan, Valid: true}

	// The adapter reads nothing more: the writer is stuck in the first request's Write,
	// and the lent request queues behind it.
	stuck := goCall(context.Background(), c1, read, `{}`)
	var head [4]byte
	if _, err := io.ReadFull(f1.inRaw, head[:]); err != nil {
		t.Fatal(err)
	}
	lent := make(chan error, 1)
	go func() {
		_, err := c1.Do(context.Background(), req)
		lent <- err
	}()
	eventually(t, "the lent request was queued", func() bool { return c1.InFlight() >= 2 })
	c1.Abort(errors.New("the adapter is gone"))
	checkOutcome(t, recv(t, lent), wire.CodeClosed, false, true)
	checkOutcome(t, recv(t, stuck).err, wire.CodeClosed, true, false)

	// Other calls take buffers from the pool and write their params into them.
	for range 4 {
		b := bufpool.Reserve(nil, n)
		b = append(b, bytes.Repeat([]byte("Z"), n)...)
		defer bufpool.Put(&b)
	}

	c2, f2 := newConn(t, osPipe, nil)
	f2.handshake(c2)
	retried := make(chan error, 1)
	go func() {
		_, err := c2.Do(context.Background(), req)
		retried <- err
	}()
	if got := f2.next(); got != want {
		t.Fatalf("the retried request differs from the params (%d bytes, want %d; %d differ)", len(got), len(want), differing([]byte(got), []byte(want)))
	}
	f2.send(resultFrame(2, `{}`))
	if err := recv(t, retried); err != nil {
		t.Fatal(err)
	}
	loan.Release()
}
