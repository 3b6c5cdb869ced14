package runtime_test

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/runtime"
)

// echo is a minimal responder: it answers initialize with a one-method catalog and
// every other request with its params as the value, writing each reply with one Write.
func echo(stdin io.Reader, stdout io.WriteCloser) {
	defer stdout.Close()
	in := proto.NewReader(stdin, 0)
	var out []byte
	for {
		p, err := in.ReadFrame()
		if err != nil {
			return
		}
		m, err := proto.DecodeHostMessage(p)
		if err != nil || m.Type != proto.TypeRequest {
			continue
		}
		out = proto.BeginFrame(out[:0])
		if m.ID == 1 {
			out = proto.AppendResult(out, m.ID, []byte(`{"protocol":1,"services":[{"id":"bench.echo","version":1,"methods":["bench.echo.call"]}]}`))
		} else {
			out = proto.AppendResult(out, m.ID, m.Params)
		}
		frame, err := proto.FinishFrame(out, 0)
		if err != nil {
			return
		}
		if _, err := stdout.Write(frame); err != nil {
			return
		}
	}
}

// benchConn connects a Conn to the echo responder over io.Pipe and initializes it.
func benchConn(b *testing.B) *runtime.Conn {
	b.Helper()
	hostR, adapterW := io.Pipe()
	adapterR, hostW := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		echo(adapterR, adapterW)
	}()
	c := runtime.NewConn(hostR, hostW, nil)
	b.Cleanup(func() {
		c.Close()
		_ = adapterR.Close()
		wg.Wait()
	})
	if _, err := c.Initialize(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return c
}

var benchParams = json.RawMessage(`{"probe":"inlet","n":42}`)

// BenchmarkCall measures one caller's round trips.
func BenchmarkCall(b *testing.B) {
	c := benchConn(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, "bench.echo.call", benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallParallel measures 32 concurrent callers (the in-flight cap) sharing b.N
// round trips.
func BenchmarkCallParallel(b *testing.B) {
	const callers = 32
	c := benchConn(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Call(ctx, "bench.echo.call", benchParams); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
}
