package runtime_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
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

// benchConn connects a Conn to the echo responder and initializes it: over io.Pipe, or
// over os.Pipe when osPipes, the pipes package lifecycle gives a connection (with read
// deadlines on Unix, so callers read their replies themselves).
func benchConn(b *testing.B, osPipes bool) *runtime.Conn {
	b.Helper()
	var hostR, adapterR io.ReadCloser
	var hostW, adapterW io.WriteCloser
	if osPipes {
		var err error
		if hostR, adapterW, err = os.Pipe(); err != nil {
			b.Fatal(err)
		}
		if adapterR, hostW, err = os.Pipe(); err != nil {
			b.Fatal(err)
		}
	} else {
		hostR, adapterW = io.Pipe()
		adapterR, hostW = io.Pipe()
	}
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

// BenchmarkCall measures one caller's round trips over io.Pipe.
func BenchmarkCall(b *testing.B) { benchCalls(b, benchConn(b, false)) }

// BenchmarkCallOSPipe measures one caller's round trips over os.Pipe.
func BenchmarkCallOSPipe(b *testing.B) { benchCalls(b, benchConn(b, true)) }

// BenchmarkCallParallel measures 32 concurrent callers (the in-flight cap) sharing b.N
// round trips over io.Pipe.
func BenchmarkCallParallel(b *testing.B) { benchCallsParallel(b, benchConn(b, false)) }

// BenchmarkCallOSPipeParallel is BenchmarkCallParallel over os.Pipe.
func BenchmarkCallOSPipeParallel(b *testing.B) { benchCallsParallel(b, benchConn(b, true)) }

func benchCalls(b *testing.B, c *runtime.Conn) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, "bench.echo.call", benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCallsParallel(b *testing.B, c *runtime.Conn) {
	const callers = 32
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
