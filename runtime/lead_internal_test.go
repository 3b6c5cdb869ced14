//go:build unix

package runtime

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// Tests of the reader role over os.Pipe, whose read deadlines let callers read their
// replies themselves.

const leadWait = 10 * time.Second // bounds waits so a broken test fails; nothing asserts on time

const leadCatalog = `{"protocol":1,"services":[{"id":"t.echo","version":1,"methods":["t.echo.call"]}]}`

// pipeAdapter is the adapter's side of a Conn over two os.Pipes.
type pipeAdapter struct {
	t   *testing.T
	in  *proto.Reader // the host's frames
	out *os.File      // the adapter's stdout
	inR *os.File
}

// leadConn connects a Conn to a pipeAdapter and performs the handshake.
func leadConn(t *testing.T, opts *Options) (*Conn, *pipeAdapter) {
	t.Helper()
	hostR, adapterW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	adapterR, hostW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(hostR, hostW, opts)
	if c.rl.dl == nil {
		t.Fatal("an os.Pipe has no read deadlines: callers cannot read")
	}
	a := &pipeAdapter{t: t, in: proto.NewReader(adapterR, 0), out: adapterW, inR: adapterR}
	t.Cleanup(func() {
		_ = adapterW.Close()
		_ = adapterR.Close()
		c.Close()
	})
	done := make(chan error, 1)
	go func() {
		_, err := c.Initialize(context.Background(), nil)
		done <- err
	}()
	a.next()
	a.write(leadFrame(`{"type":"result","v":1,"id":1,"value":` + leadCatalog + `}`))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(leadWait):
		t.Fatal("no handshake")
	}
	return c, a
}

// next returns the next frame from the host.
func (a *pipeAdapter) next() proto.Message {
	a.t.Helper()
	type res struct {
		p   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		p, err := a.in.ReadFrame()
		ch <- res{p, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			a.t.Fatalf("adapter: %v", r.err)
		}
		m, err := proto.DecodeHostMessage(r.p)
		if err != nil {
			a.t.Fatalf("adapter: %v", err)
		}
		return m
	case <-time.After(leadWait):
		a.t.Fatal("adapter: no frame from the host")
	}
	return proto.Message{}
}

func (a *pipeAdapter) write(b []byte) { _, _ = a.out.Write(b) }

func leadFrame(payload string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

func leadResult(id uint64, value string) []byte {
	return leadFrame(`{"type":"result","v":1,"id":` + strconv.FormatUint(id, 10) + `,"value":` + value + `}`)
}

type leadOutcome struct {
	v   json.RawMessage
	err error
}

func leadCall(ctx context.Context, c *Conn, params string) <-chan leadOutcome {
	ch := make(chan leadOutcome, 1)
	go func() {
		v, err := c.Call(ctx, "t.echo.call", json.RawMessage(params))
		ch <- leadOutcome{v, err}
	}()
	return ch
}

func leadRecv(t *testing.T, ch <-chan leadOutcome) leadOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(leadWait):
		t.Fatal("no outcome")
	}
	return leadOutcome{}
}

// until polls cond (state without an event to wait on: who holds the role).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, leadWait, cond, "never happened: %s", what)
}

// keepFree keeps the role free for the test's length once nothing is in flight (the
// connection's reader does not take it), so that a call surely finds it free.
func keepFree(t *testing.T) {
	old := watchAfter
	watchAfter = time.Hour
	t.Cleanup(func() { watchAfter = old })
}

// holder reports who holds the reader role, and the reading caller's identity.
func (c *Conn) holderOf() (roleHolder, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rl.holder == roleCaller {
		return roleCaller, c.rl.caller.id
	}
	return c.rl.holder, 0
}

func (c *Conn) readsFor(id uint64) func() bool {
	return func() bool { h, cid := c.holderOf(); return h == roleCaller && cid == id }
}

// A lone call reads its own reply; a second call meanwhile is handed its reply by the
// first; with nothing in flight the role is free.
func TestLoneCallReadsItsReply(t *testing.T) {
	keepFree(t)
	c, a := leadConn(t, nil)
	if h, _ := c.holderOf(); h != roleFree {
		t.Fatalf("after the handshake the role is held by %d, want free", h)
	}
	first := leadCall(context.Background(), c, `{"n":1}`)
	m1 := a.next()
	until(t, "the first caller reads", c.readsFor(m1.ID))
	second := leadCall(context.Background(), c, `{"n":2}`)
	m2 := a.next()
	a.write(leadResult(m2.ID, `"two"`))
	if o := leadRecv(t, second); o.err != nil || string(o.v) != `"two"` {
		t.Fatalf("second call: %s %v", o.v, o.err)
	}
	if h, id := c.holderOf(); h != roleCaller || id != m1.ID {
		t.Fatalf("the first caller left the role before its reply (holder %d, id %d)", h, id)
	}
	a.write(leadResult(m1.ID, `"one"`))
	if o := leadRecv(t, first); o.err != nil || string(o.v) != `"one"` {
		t.Fatalf("first call: %s %v", o.v, o.err)
	}
	if h, _ := c.holderOf(); h == roleCaller {
		t.Fatal("a caller still holds the role with nothing in flight")
	}
}

// R36, R39: a reading caller whose context ends in the middle of another call's reply
// returns at once (aborted, uncertain, a cancel sent), and the frame it was reading is
// neither lost nor broken: the next reader finishes it and hands it to its caller.
func TestCancelledReaderKeepsTheFrame(t *testing.T) {
	keepFree(t)
	c, a := leadConn(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := leadCall(ctx, c, `{}`)
	m1 := a.next()
	until(t, "the first caller reads", c.readsFor(m1.ID))
	second := leadCall(context.Background(), c, `{}`)
	m2 := a.next()
	reply := leadResult(m2.ID, `"second"`)
	a.write(reply[:7]) // the header and a few bytes of the payload
	until(t, "the reader took the part", func() bool { return a.unread() == 0 })
	cancel()
	o := leadRecv(t, first)
	if CodeOf(o.err) != wire.CodeAborted || !IsUncertain(o.err) {
		t.Fatalf("cancelled reader: %v", o.err)
	}
	if m := a.next(); m.Type != proto.TypeCancel || m.ID != m1.ID {
		t.Fatalf("host sent %v %d, want a cancel of %d", m.Type, m.ID, m1.ID)
	}
	a.write(reply[7:])
	if o := leadRecv(t, second); o.err != nil || string(o.v) != `"second"` {
		t.Fatalf("second call: %s %v", o.v, o.err)
	}
	a.write(leadResult(m1.ID, `"late"`)) // dropped: its caller gave up
	until(t, "the cancelled call's slot is released", func() bool { return c.InFlight() == 0 })
	if err := c.Err(); err != nil {
		t.Fatalf("connection ended: %v", err)
	}
	third := leadCall(context.Background(), c, `{}`)
	m3 := a.next()
	a.write(leadResult(m3.ID, `3`))
	if o := leadRecv(t, third); o.err != nil || string(o.v) != `3` {
		t.Fatalf("third call: %s %v", o.v, o.err)
	}
}

// R43, A37: the default call deadline ends a reading caller's wait too (deadline,
// uncertain); its late reply is read and dropped, and the connection goes on.
func TestReaderCallDeadline(t *testing.T) {
	c, a := leadConn(t, &Options{Limits: &limits.Limits{CallDeadline: 50 * time.Millisecond}})
	first := leadCall(context.Background(), c, `{}`)
	m1 := a.next()
	o := leadRecv(t, first)
	if CodeOf(o.err) != wire.CodeDeadline || !IsUncertain(o.err) || !errors.Is(o.err, ErrCallDeadline) {
		t.Fatalf("call past its deadline: %v", o.err)
	}
	if m := a.next(); m.Type != proto.TypeCancel || m.ID != m1.ID {
		t.Fatalf("host sent %v %d, want a cancel of %d", m.Type, m.ID, m1.ID)
	}
	a.write(leadResult(m1.ID, `"late"`))
	until(t, "the late reply is read", func() bool { return c.InFlight() == 0 })
	second := leadCall(context.Background(), c, `{}`)
	m2 := a.next()
	a.write(leadResult(m2.ID, `2`))
	if o := leadRecv(t, second); o.err != nil || string(o.v) != `2` {
		t.Fatalf("second call: %s %v", o.v, o.err)
	}
}

// R52, R53: with nothing in flight and nobody reading, the end of the adapter's output
// or bytes that break framing still end the connection (the role does not stay free).
func TestIdleOutputWatched(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bytes  []byte
		detail error
	}{
		{"end of output", nil, io.EOF},
		{"stray print", []byte("hello\n"), proto.ErrFrameTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, a := leadConn(t, nil)
			o := leadCall(context.Background(), c, `{}`)
			m := a.next()
			a.write(leadResult(m.ID, `1`))
			if r := leadRecv(t, o); r.err != nil {
				t.Fatal(r.err)
			}
			if h, _ := c.holderOf(); h == roleCaller {
				t.Fatal("a caller holds the role with nothing in flight")
			}
			if tt.bytes != nil {
				a.write(tt.bytes)
			} else {
				_ = a.out.Close()
			}
			select {
			case <-c.Done():
			case <-time.After(leadWait):
				t.Fatal("the idle connection did not see the end of its output")
			}
			var v *wire.ViolationError
			if err := c.Err(); !errors.As(err, &v) || v.Kind != wire.Output || !errors.Is(err, tt.detail) {
				t.Fatalf("cause %v, want an Output violation with %v", err, tt.detail)
			}
		})
	}
}

// R51: the connection's end while a caller reads its reply, by the adapter (end of
// output) or the host (Close), fails that call once, closed and uncertain.
func TestEndWhileCallerReads(t *testing.T) {
	for _, byHost := range []bool{false, true} {
		t.Run("byHost="+strconv.FormatBool(byHost), func(t *testing.T) {
			keepFree(t)
			c, a := leadConn(t, nil)
			o := leadCall(context.Background(), c, `{}`)
			m := a.next()
			until(t, "the caller reads", c.readsFor(m.ID))
			a.write(leadResult(m.ID, `1`)[:5])
			if byHost {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				_ = a.out.Close()
			}
			r := leadRecv(t, o)
			if CodeOf(r.err) != wire.CodeClosed || !IsUncertain(r.err) {
				t.Fatalf("call: %v", r.err)
			}
			want := error(ErrClosed)
			if !byHost {
				want = proto.ErrFrameTruncated
			}
			if !errors.Is(r.err, want) || !errors.Is(c.Err(), want) {
				t.Fatalf("call %v, connection %v, want %v", r.err, c.Err(), want)
			}
		})
	}
}

// Many callers, some giving up in the middle of a read, over replies that arrive in any
// order and in pieces: every call has exactly one outcome, its own value or its
// context's error (never started, or uncertain once sent), every slot comes back, and the connection lives on.
func TestReaderHandOverUnderLoad(t *testing.T) {
	c, a := leadConn(t, nil)
	adapterDone := make(chan struct{})
	go func() { // the adapter: answers every request, later, in pieces
		defer close(adapterDone)
		var mu sync.Mutex
		var wg sync.WaitGroup
		defer wg.Wait()
		for {
			p, err := a.in.ReadFrame()
			if err != nil {
				return
			}
			m, err := proto.DecodeHostMessage(p)
			if err != nil || m.Type != proto.TypeRequest {
				continue
			}
			wg.Add(1)
			go func(id uint64, params []byte) {
				defer wg.Done()
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
				f := leadResult(id, string(params))
				cut := 1 + rand.IntN(len(f)-1)
				mu.Lock()
				defer mu.Unlock()
				a.write(f[:cut])
				if rand.IntN(2) == 0 {
					time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				}
				a.write(f[cut:])
			}(m.ID, append([]byte(nil), m.Params...))
		}
	}()
	const callers, calls = 16, 150
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				ctx, cancel := context.WithCancel(context.Background())
				if rand.IntN(4) == 0 {
					time.AfterFunc(time.Duration(rand.IntN(400))*time.Microsecond, cancel)
				}
				want := `{"g":` + strconv.Itoa(g) + `,"i":` + strconv.Itoa(i) + `}`
				v, err := c.Call(ctx, "t.echo.call", json.RawMessage(want))
				cancel()
				switch {
				case err == nil && string(v) != want:
					errs <- errors.New("value " + string(v) + ", want " + want)
					return
				case err != nil && (CodeOf(err) != wire.CodeAborted || IsUncertain(err) == IsNeverStarted(err)):
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	until(t, "every slot is released", func() bool { return c.InFlight() == 0 })
	if err := c.Err(); err != nil {
		t.Fatalf("connection ended: %v", err)
	}
	c.Close()
	<-adapterDone
}
