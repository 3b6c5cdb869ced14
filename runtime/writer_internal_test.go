package runtime

import (
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// respond answers initialize with a one-method catalog and every other request with its
// params.
func respond(stdin io.Reader, stdout io.WriteCloser) {
	defer stdout.Close()
	in := proto.NewReader(stdin, 0)
	for {
		p, err := in.ReadFrame()
		if err != nil {
			return
		}
		m, err := proto.DecodeHostMessage(p)
		if err != nil || m.Type != proto.TypeRequest {
			continue
		}
		value := m.Params
		if m.ID == 1 {
			value = []byte(`{"protocol":1,"services":[{"id":"t.echo","version":1,"methods":["t.echo.call"]}]}`)
		}
		frame, err := proto.FinishFrame(proto.AppendResult(proto.BeginFrame(nil), m.ID, value), 0)
		if err != nil {
			return
		}
		if _, err := stdout.Write(frame); err != nil {
			return
		}
	}
}

// The write loop ending when idle and being started again by the next request loses
// no request, however the two interleave: with an idle time of a microsecond it ends
// and starts between most requests of concurrent callers.
func TestWriterRetiresAndRestarts(t *testing.T) {
	defer func(d time.Duration) { writerIdle = d }(writerIdle)
	writerIdle = time.Microsecond
	hostR, adapterW := io.Pipe()
	adapterR, hostW := io.Pipe() // no non-blocking attempt: every request is the loop's
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		respond(adapterR, adapterW)
	}()
	c := NewConn(hostR, hostW, nil)
	defer func() {
		c.Close()
		_ = adapterR.Close()
		wg.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var callers sync.WaitGroup
	for i := range 8 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for j := range 200 {
				want := `{"caller":` + strconv.Itoa(i) + `,"n":` + strconv.Itoa(j) + `}`
				got, err := c.Call(ctx, "t.echo.call", []byte(want))
				if err != nil || string(got) != want {
					t.Errorf("caller %d call %d: %s, %v", i, j, got, err)
					return
				}
				if j%16 == 0 {
					time.Sleep(50 * time.Microsecond) // let the loop end now and then
				}
			}
		}()
	}
	callers.Wait()
}
