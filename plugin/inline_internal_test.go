package plugin

import (
	"context"
	"encoding/binary"
	"io"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// inlineHost is the host's side of a Serve inside a synctest bubble, over io.Pipes: a
// write returns only once the adapter has read the frame, so the bubble's clock says
// when the adapter read it.
type inlineHost struct {
	in      *io.PipeWriter // the adapter's input
	replies chan []byte
}

func serveInline(t *testing.T, svc *Service) *inlineHost {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &inlineHost{in: inW, replies: make(chan []byte, 16)}
	served := make(chan error, 1)
	go func() { served <- (&Adapter{Services: []*Service{svc}}).Serve(context.Background(), inR, outW) }()
	go func() {
		r := proto.NewReader(outR, 0)
		for {
			p, err := r.ReadFrame()
			if err != nil {
				close(h.replies)
				return
			}
			h.replies <- append([]byte(nil), p...)
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = outR.Close()
	})
	h.send(t, `{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`)
	h.reply(t)
	return h
}

func (h *inlineHost) send(t *testing.T, payload string) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	if _, err := h.in.Write(append(b, payload...)); err != nil {
		t.Fatalf("host: %v", err)
	}
}

func (h *inlineHost) reply(t *testing.T) string {
	t.Helper()
	p, ok := <-h.replies
	if !ok {
		t.Fatal("host: the adapter's output ended")
	}
	return string(p)
}

func waitRequest(id int, ms int) string {
	return `{"type":"request","v":1,"id":` + strconv.Itoa(id) + `,"method":"t.svc.wait","params":{"ms":` + strconv.Itoa(ms) + `}}`
}

// A lone request's handler runs in the reading goroutine, which reads the next input
// (here a second request) no later than the handler's inline budget after the request
// came: coldInlineFor for the first request after initialize, inlineFor after that.
// A handler shorter than its budget is followed by the read as soon as it returns.
// On fake time, so the bounds are exact.
func TestInlineTurnPassesAfterItsBudget(t *testing.T) {
	type params struct {
		MS int `json:"ms"`
	}
	synctest.Test(t, func(t *testing.T) {
		svc := NewService("t.svc", 1)
		Handle(svc, "t.svc.wait", func(ctx context.Context, p params) (int, error) {
			select {
			case <-time.After(time.Duration(p.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return p.MS, nil
		})
		h := serveInline(t, svc)
		id := 2
		for _, tc := range []struct {
			name     string
			handler  time.Duration // how long the first request's handler runs
			readNext time.Duration // when the second request is read, from the first's read
		}{
			{"cold, longer than its budget", 50 * time.Millisecond, coldInlineFor},
			{"warm, longer than its budget", 50 * time.Millisecond, inlineFor},
			{"warm, within its budget", 0, 0},
		} {
			synctest.Wait() // the last round's handlers have finished: the next request is alone
			h.send(t, waitRequest(id, int(tc.handler/time.Millisecond)))
			start := time.Now()
			h.send(t, waitRequest(id+1, 0))
			if got := time.Since(start); got != tc.readNext {
				t.Errorf("%s: the next request was read %v after the first, want %v", tc.name, got, tc.readNext)
			}
			for range 2 {
				h.reply(t)
			}
			if got := time.Since(start); got != tc.handler {
				t.Errorf("%s: replies after %v, want %v", tc.name, got, tc.handler)
			}
			id += 2
		}
	})
}
