package runtime_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adapterkit/adapterkit/runtime"
)

// benchOSConn connects a Conn to the echo responder over os.Pipe, the pipes package
// lifecycle gives a connection (with read deadlines on Unix, so callers read their
// replies themselves), and initializes it.
func benchOSConn(b *testing.B) *runtime.Conn {
	b.Helper()
	hostR, adapterW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	adapterR, hostW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
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

// BenchmarkCallOSPipe measures one caller's round trips over os.Pipe.
func BenchmarkCallOSPipe(b *testing.B) {
	c := benchOSConn(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, "bench.echo.call", benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallOSPipeParallel measures 32 concurrent callers over os.Pipe sharing b.N
// round trips.
func BenchmarkCallOSPipeParallel(b *testing.B) {
	const callers = 32
	c := benchOSConn(b)
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
