package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// R16, R39, A17: a call whose context is cancelled exactly as its reply arrives has
// exactly one outcome, its slot is released exactly once, and no reply is taken for
// one to an unknown id.
func TestCancelRacesReply(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			c, f := newConn(t, kind, &runtime.Options{FailFast: true})
			f.handshake(c)
			for i := 0; i < 200; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				ch := goCall(ctx, c, read, "")
				p := f.next()
				m, err := proto.DecodeHostMessage([]byte(p))
				if err != nil {
					t.Fatal(err)
				}
				go cancel()
				f.send(resultFrame(int(m.ID), `"v`+strconv.Itoa(i)+`"`))
				r := recv(t, ch)
				if r.err == nil {
					var s string
					if json.Unmarshal(r.v, &s) != nil || s != "v"+strconv.Itoa(i) {
						t.Fatalf("value %s", r.v)
					}
				} else if runtime.CodeOf(r.err) != wire.CodeAborted || !runtime.IsUncertain(r.err) {
					t.Fatalf("err %v", r.err)
				}
				eventually(t, "slot released", func() bool { return c.InFlight() == 0 })
				if r.err != nil {
					// The caller gave up first: its cancel follows (R36).
					if got := f.next(); got != cancelFrame(int(m.ID)) {
						t.Fatalf("got %s", got)
					}
				}
				if c.Err() != nil {
					t.Fatal(c.Err())
				}
			}
		})
	}
}

// R51, A3: Close or Abort racing with calls (some cancelled before they start) gives
// every call exactly one outcome that is either never started or uncertain, and leaves
// no goroutine behind.
func TestCloseRacesCalls(t *testing.T) {
	for _, kind := range pipeKinds {
		t.Run(string(kind), func(t *testing.T) {
			for iter := 0; iter < 30; iter++ {
				c, f := newConn(t, kind, &runtime.Options{FailFast: iter%2 == 0})
				f.handshake(c)
				go func() {
					for {
						p, err := f.in.ReadFrame()
						if err != nil {
							return
						}
						m, err := proto.DecodeHostMessage(p)
						if err != nil || m.Type != proto.TypeRequest {
							continue
						}
						f.sendRaw(frame(resultFrame(int(m.ID), `1`)))
					}
				}()
				var chans []<-chan result
				for i := 0; i < 40; i++ {
					ctx, cancel := context.WithCancel(context.Background())
					if i%3 == 0 {
						cancel()
					}
					defer cancel()
					chans = append(chans, goCall(ctx, c, read, ""))
				}
				if iter%2 == 0 {
					c.Close()
				} else {
					c.Abort(errors.New("boom"))
				}
				for _, ch := range chans {
					r := recv(t, ch)
					if r.err == nil {
						continue
					}
					ce := callError(t, r.err)
					if ce.Uncertain == ce.NeverStarted {
						t.Fatalf("outcome flags both %v: %v", ce.Uncertain, r.err)
					}
				}
			}
		})
	}
}
