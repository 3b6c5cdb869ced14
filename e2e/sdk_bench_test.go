package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/registry"
)

// BenchmarkSDKEcho compares each SDK's echo adapter with the Go SDK's examples/echo
// through the same host: "rtt" is one caller's round trip of a small echo (p50-µs is
// its median), "par32" is 32 callers at once (calls/s). "floor" is the language's own
// limit: 64 bytes bounced over the same kind of pipes off a child written in that
// language with no SDK, no framing and no JSON, which writes back whatever it read in
// one write (e2e/testdata/pingpong,
// sdk/python/tools/pingpong.py, sdk/typescript/tools/pingpong.mjs,
// sdk/rust/tools/pingpong.rs, which `make adapters` builds next to the Rust echo), one
// caller at a time (p50-µs and calls/s); "floor32" bounces them for 32 callers at
// once, as the host does calls: one writer writes whatever the callers queued in one
// write, and one reader hands each message back to the caller it names (calls/s). Run it with
//
//	make adapters && ADAPTERKIT_SDK_ADAPTERS=$PWD/build/adapters go test -run '^$' -bench SDKEcho ./e2e/
//
// (`make bench-sdk`). It is a measurement, not a test: nothing asserts on speed.
func BenchmarkSDKEcho(b *testing.B) {
	dir := sdkAdapterDir()
	if dir == "" {
		b.Skip("set ADAPTERKIT_SDK_ADAPTERS to the directory `make adapters` filled")
	}
	adapters := []struct{ name, path string }{{"go", buildBin("examples/echo")}}
	floors := map[string][]string{
		"go":     {buildBin("e2e/testdata/pingpong")},
		"pyecho": {"python3", "../sdk/python/tools/pingpong.py"},
		"tsecho": {"node", "../sdk/typescript/tools/pingpong.mjs"},
		"rsecho": {"../sdk/rust/target/release/examples/pingpong"},
	}
	for _, e := range sdkEchoes {
		p := filepath.Join(dir, e.file)
		if _, err := os.Stat(p); err != nil { // not built on this machine: `make adapters` said why
			b.Logf("%s left out: %v", e.name, err)
			continue
		}
		adapters = append(adapters, struct{ name, path string }{e.name, p})
	}
	params := json.RawMessage(`{"probe":"inlet","n":12345,"ok":true}`)
	for _, a := range adapters {
		reg := registry.New(&registry.Config{Env: []string{"PATH=" + os.Getenv("PATH")}})
		ctx := context.Background()
		h, err := reg.Open(ctx, a.path, nil)
		if err != nil {
			b.Fatalf("open %s: %v", a.name, err)
		}
		b.Run(a.name+"/rtt", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for range b.N {
				t := time.Now()
				if _, err := h.Call(ctx, "example.echo.echo", params); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		})
		b.Run(a.name+"/par32", func(b *testing.B) {
			var wg sync.WaitGroup
			per := (b.N + 31) / 32
			start := time.Now()
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range per {
						if _, err := h.Call(ctx, "example.echo.echo", params); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*32)/time.Since(start).Seconds(), "calls/s")
		})
		if err := reg.Close(ctx); err != nil {
			b.Fatalf("close %s: %v", a.name, err)
		}
		if argv := floors[a.name]; argv != nil {
			b.Run(a.name+"/floor", func(b *testing.B) { benchPingpong(b, argv) })
			b.Run(a.name+"/floor32", func(b *testing.B) { benchPingpong32(b, argv) })
		}
	}
}

// startPingpong starts the child argv (a pingpong program) with its stdin and stdout
// pipes, or skips the benchmark when it cannot be started.
func startPingpong(b *testing.B, argv []string) (*exec.Cmd, io.WriteCloser, io.Reader) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skipf("%s: %v", argv[0], err)
	}
	return cmd, in, out
}

// benchPingpong32 bounces 64-byte messages off the child argv (a pingpong program) for
// 32 callers at once, b.N in all, and reports the calls/s. A message's first byte names
// its caller; one goroutine writes the queued messages, batched, and one reads the
// replies and hands each to its caller.
func benchPingpong32(b *testing.B, argv []string) {
	const callers = 32
	cmd, in, out := startPingpong(b, argv)
	// One writer writes whatever callers queued in one write, as a host batches frames.
	queue := make(chan []byte, callers)
	writeErr := make(chan error, 1)
	go func() {
		var batch []byte
		for m := range queue {
			batch = append(batch[:0], m...)
			for more := true; more; {
				select {
				case m, ok := <-queue:
					if !ok {
						more = false
						break
					}
					batch = append(batch, m...)
				default:
					more = false
				}
			}
			if _, err := in.Write(batch); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	replies := make([]chan []byte, callers)
	for i := range replies {
		replies[i] = make(chan []byte, 1)
	}
	var readErr error
	dead := make(chan struct{}) // closed when the reader stops, readErr set
	go func() {
		defer close(dead)
		for {
			m := make([]byte, 64)
			if _, err := io.ReadFull(out, m); err != nil {
				readErr = err
				return
			}
			if int(m[0]) >= callers {
				readErr = fmt.Errorf("%s bounced a message of caller %d", argv, m[0])
				return
			}
			replies[m[0]] <- m
		}
	}()
	call := func(i int, msg []byte) error {
		select {
		case queue <- msg:
		case err := <-writeErr:
			return err
		}
		select {
		case m := <-replies[i]:
			if !bytes.Equal(m, msg) {
				return fmt.Errorf("%s bounced %q for %q", argv, m, msg)
			}
			return nil
		case <-dead:
			return readErr
		}
	}
	warm := bytes.Repeat([]byte{'p'}, 64)
	warm[0] = 0
	if err := call(0, warm); err != nil { // the child has started and answers
		b.Fatal(err)
	}
	per := (b.N + callers - 1) / callers
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := bytes.Repeat([]byte{'p'}, 64)
			msg[0] = byte(i)
			for range per {
				if err := call(i, msg); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(queue)
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v", argv, err)
	}
	b.ReportMetric(float64(per*callers)/elapsed.Seconds(), "calls/s")
}

// benchPingpong bounces 64 bytes off the child argv (a pingpong program) b.N times over
// its stdin and stdout pipes and reports the median round trip and the calls/s.
func benchPingpong(b *testing.B, argv []string) {
	cmd, in, out := startPingpong(b, argv)
	msg := bytes.Repeat([]byte{'p'}, 64)
	reply := make([]byte, 64)
	bounce := func() {
		if _, err := in.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(out, reply); err != nil {
			b.Fatal(err)
		}
	}
	bounce() // the child has started and answers
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		t := time.Now()
		bounce()
		lat = append(lat, time.Since(t))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if !bytes.Equal(reply, msg) {
		b.Fatalf("%s bounced %q", argv, reply)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v", argv, err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}
