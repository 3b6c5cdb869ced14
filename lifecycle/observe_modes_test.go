package lifecycle_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// observeModes are the test adapters of the observability tests.
var observeModes = map[string]func(){
	"observe": serveObserve,
}

// slogLevels are the slog levels of go-hclog's level names, as plugin.Logger writes them.
var slogLevels = map[string]slog.Level{"trace": slog.LevelDebug - 4, "debug": slog.LevelDebug,
	"info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// hold keeps allocated memory reachable.
var hold [][]byte

// serveObserve is an adapter that logs, floods its stderr, fails on request, hangs
// until cancelled, allocates memory and burns CPU.
func serveObserve() {
	log := plugin.Logger()
	svc := plugin.NewService("test.obs", 1)
	plugin.Handle(svc, "test.obs.ok", func(_ context.Context, p struct {
		Pad string `json:"pad"`
	}) (string, error) {
		return p.Pad, nil
	})
	plugin.Handle(svc, "test.obs.fail", func(_ context.Context, p struct {
		Code string `json:"code"`
	}) (empty, error) {
		return empty{}, plugin.Errorf(wire.Code(p.Code), "failing as asked")
	})
	plugin.Handle(svc, "test.obs.hang", func(ctx context.Context, _ empty) (empty, error) {
		<-ctx.Done()
		return empty{}, plugin.Errorf(wire.CodeAborted, "canceled")
	})
	plugin.Handle(svc, "test.obs.log", func(_ context.Context, p struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
		Probe string `json:"probe"`
		Plain string `json:"plain"`
	}) (empty, error) {
		if p.Msg != "" {
			log.Log(context.Background(), slogLevels[p.Level], p.Msg, "probe", p.Probe, "n", 7)
		}
		if p.Plain != "" {
			fmt.Fprint(os.Stderr, p.Plain)
		}
		return empty{}, nil
	})
	// panic crashes the adapter with an unrecovered panic of the given value, whose
	// stack the Go runtime writes on stderr.
	plugin.Handle(svc, "test.obs.panic", func(_ context.Context, p struct {
		Value string `json:"value"`
	}) (empty, error) {
		go func() { panic(p.Value) }()
		select {}
	})
	// flood writes stderr as fast as it can for ms milliseconds (in the background)
	// and answers at once; flooded answers once the flood is over with the bytes
	// written, the most lines written in any 100 ms, and the longest single write.
	var flooded atomic.Int64
	var longest atomic.Int64
	floodDone := make(chan struct{})
	plugin.Handle(svc, "test.obs.flood", func(_ context.Context, p struct {
		MS int `json:"ms"`
	}) (empty, error) {
		go func() {
			defer close(floodDone)
			line := []byte("flood flood flood flood flood flood flood flood flood flood flood flood\n")
			buf := make([]byte, 0, 64<<10)
			for len(buf)+len(line) <= cap(buf) {
				buf = append(buf, line...)
			}
			end := time.Now().Add(time.Duration(p.MS) * time.Millisecond)
			for time.Now().Before(end) {
				t := time.Now()
				n, err := os.Stderr.Write(buf)
				if d := int64(time.Since(t)); d > longest.Load() {
					longest.Store(d)
				}
				if err != nil {
					return
				}
				flooded.Add(int64(n))
			}
		}()
		return empty{}, nil
	})
	plugin.Handle(svc, "test.obs.flooded", func(ctx context.Context, _ empty) ([2]int64, error) {
		select {
		case <-floodDone:
			return [2]int64{flooded.Load(), longest.Load()}, nil
		case <-ctx.Done():
			return [2]int64{}, plugin.Errorf(wire.CodeAborted, "still flooding")
		}
	})
	plugin.Handle(svc, "test.obs.exit", func(context.Context, empty) (empty, error) {
		fmt.Fprintln(os.Stderr, "exiting with status 3")
		os.Exit(3)
		return empty{}, nil
	})
	plugin.Handle(svc, "test.obs.alloc", func(_ context.Context, p struct {
		MiB int `json:"mib"`
	}) (int, error) {
		for range p.MiB {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hold = append(hold, b)
		}
		return len(hold), nil
	})
	plugin.Handle(svc, "test.obs.spin", func(_ context.Context, p struct {
		MS int `json:"ms"`
	}) (string, error) {
		end := time.Now().Add(time.Duration(p.MS) * time.Millisecond)
		x := 0
		for time.Now().Before(end) {
			for i := range 10000 {
				x += i
			}
		}
		return strconv.Itoa(x), nil
	})
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}
