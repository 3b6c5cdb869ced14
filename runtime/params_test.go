package runtime_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/wire"
)

// Params that come without a loan (validjson.Lend) are copied into the connection's
// write queue: the caller's buffer is its own again as soon as Call returns, also when
// the call was given up while its frame was being written. The caller writes over it, and the frame still goes out whole and
// unchanged, followed by the cancel; the connection goes on.
func TestParamsFreeOnceCallReturns(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, nil)
			f.handshake(c)

			const n = 1 << 20
			params := []byte(`{"s":"` + strings.Repeat("p", n-len(`{"s":""}`)) + `"}`)
			want := []byte(request(2, read, string(params)))

			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() {
				_, err := c.Call(ctx, read, params)
				// Call has returned: the buffer is the caller's, who writes over it.
				copy(params, bytes.Repeat([]byte("Z"), len(params)))
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
