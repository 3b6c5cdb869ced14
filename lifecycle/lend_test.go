package lifecycle_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/bufpool"
	"github.com/adapterkit/adapterkit/internal/handover"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/plugin"
)

func init() { observeModes["stallonce"] = stallOnce }

type text struct {
	S string `json:"s"`
}

// stallOnce serves test.lend.echo. Its first instance (no file at
// ADAPTERKIT_TEST_MARK yet) answers the handshake, reads the header of the next
// request only, says so by creating that file with ".started" appended, and exits a
// little later without reading more; the instances after it serve normally.
func stallOnce() {
	svc := plugin.NewService("test.lend", 1)
	plugin.Handle(svc, "test.lend.echo", func(_ context.Context, p text) (text, error) { return p, nil })
	a := &plugin.Adapter{Services: []*plugin.Service{svc}}
	mark := os.Getenv("ADAPTERKIT_TEST_MARK")
	if _, err := os.Stat(mark); err == nil {
		plugin.Main(a)
		return
	}
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		os.Exit(2)
	}
	cat, err := a.Catalog()
	if err != nil {
		os.Exit(2)
	}
	value, err := proto.AppendCatalog(nil, cat)
	if err != nil {
		os.Exit(2)
	}
	if _, err := proto.NewReader(os.Stdin, 0).ReadFrame(); err != nil { // initialize
		os.Exit(2)
	}
	frame, _ := proto.AppendFrame(nil, proto.AppendResult(nil, 1, value), 0, false)
	_, _ = os.Stdout.Write(frame)
	var head [4]byte
	if _, err := io.ReadFull(os.Stdin, head[:]); err != nil {
		os.Exit(2)
	}
	_ = os.WriteFile(mark+".started", nil, 0o600)
	time.Sleep(time.Second)
	os.Exit(1)
}

// A typed client's large params, lent with their pooled buffer, whose request was
// still queued when the adapter's connection ended (behind a request the adapter
// stopped reading), are sent again whole and unchanged to the restarted adapter —
// while other goroutines keep taking buffers from the pool and writing over them.
func TestLentParamsRetriedAfterRestart(t *testing.T) {
	mark := filepath.Join(testkit.TempDir(t), "mark") // Wine: see testkit.TempDir
	s, err := lifecycle.Supervise(ctxT(t), lifecycle.Config{Path: self(t), Env: env("stallonce", "ADAPTERKIT_TEST_MARK="+mark)},
		lifecycle.RestartPolicy{MaxRestarts: 1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	stop := make(chan struct{})
	var scribblers sync.WaitGroup
	defer func() { close(stop); scribblers.Wait() }()
	const n = 1 << 20
	for range 2 {
		scribblers.Add(1)
		go func() {
			defer scribblers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b := bufpool.Reserve(nil, n)
				b = append(b, bytes.Repeat([]byte("Z"), n)...)
				bufpool.Put(&b)
			}
		}()
	}

	// The first request stalls in its Write: the adapter reads its header only.
	first := make(chan error, 1)
	go func() {
		_, err := s.Call(ctxT(t), "test.lend.echo", []byte(`{"s":"`+strings.Repeat("f", n)+`"}`))
		first <- err
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { _, err := os.Stat(mark + ".started"); return err == nil },
		"the first request never reached the adapter")
	buf := bufpool.Get()
	*buf = bufpool.Reserve(*buf, n)
	*buf = append(append(append((*buf)[:0], `{"s":"`...), strings.Repeat("p", n-len(`{"s":""}`))...), `"}`...)
	params := *buf
	want := string(params)
	req := &handover.Request{Method: "test.lend.echo", Params: params, Lease: handover.Lend(buf), Valid: true}
	res, err := s.Do(ctxT(t), req)
	req.Lease.Release()
	if err != nil {
		t.Fatalf("the lent call: %v", err)
	}
	if string(res) != want {
		t.Fatalf("the echo of the retried request differs from its params (%d bytes, want %d)", len(res), len(want))
	}
	if r := s.Stats().Restarts; r != 1 {
		t.Fatalf("%d restarts, want 1", r)
	}
	<-first
}
