package controlplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/certgen"
)

// loadFor is how long each transport of TestRemoteLoad runs; `make test` uses the
// short default, the issue's measurement -load=10s.
var loadFor = flag.Duration("load", time.Second, "duration of each transport's run in TestRemoteLoad")

// Environment of the discover-client-tls role.
const (
	remoteAddrEnv = "CONTROLPLANE_TEST_REMOTE"
	remotePKIEnv  = "CONTROLPLANE_TEST_PKI" // CA, certificate and key files, separated by os.PathListSeparator
)

// discoverClientTLSMain is discoverClientMain over TLS.
func discoverClientTLSMain() int {
	ctx := context.Background()
	files := strings.Split(os.Getenv(remotePKIEnv), string(os.PathListSeparator))
	cfg, err := ClientTLSConfig(files[0], files[1], files[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := DialTLS(ctx, os.Getenv(remoteAddrEnv), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer c.Close()
	err = c.Discover(ctx, time.Minute, func(ev DiscoverEvent) error {
		fmt.Println(ev.Change, ev.Adapter.Path)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// loadClient sends Send requests on its own connection, up to window at once, until
// stop; then it waits for every answer. It checks, at the frame level, that each
// request is answered exactly once, with its own value, and nothing else arrives.
type loadClient struct {
	nc   net.Conn
	id   int
	mu   sync.Mutex
	want map[string]string // outstanding request id -> expected value
	done int
	err  error
}

const loadWindow = 4

func (lc *loadClient) run(stop <-chan struct{}) {
	slots := make(chan struct{}, loadWindow)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		lc.read(slots)
	}()
	for n := 0; ; n++ {
		select {
		case <-stop:
		case slots <- struct{}{}:
			id := newID()
			value := fmt.Sprintf(`{"client":%d,"n":%d}`, lc.id, n)
			lc.mu.Lock()
			lc.want[id] = value
			lc.mu.Unlock()
			body := mustJSON(map[string]any{"id": id, "kind": "request", "method": "Send",
				"params": map[string]any{"adapter": "echo", "method": "example.echo.echo", "params": json.RawMessage(value)}})
			frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
			if _, err := lc.nc.Write(append(frame, body...)); err != nil {
				lc.fail(fmt.Errorf("write: %w", err))
				<-readDone
				return
			}
			continue
		case <-readDone:
			return
		}
		break
	}
	// Every slot back means every answer arrived.
	for range loadWindow {
		select {
		case slots <- struct{}{}:
		case <-readDone:
			return
		}
	}
	_ = lc.nc.Close()
	<-readDone
}

func (lc *loadClient) fail(err error) {
	lc.mu.Lock()
	if lc.err == nil {
		lc.err = fmt.Errorf("client %d: %w", lc.id, err)
	}
	lc.mu.Unlock()
	_ = lc.nc.Close()
}

func (lc *loadClient) read(slots chan struct{}) {
	br := bufio.NewReader(lc.nc)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			lc.mu.Lock()
			open := len(lc.want)
			lc.mu.Unlock()
			if open > 0 {
				lc.fail(fmt.Errorf("connection ended with %d requests unanswered: %w", open, err))
			}
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(br, body); err != nil {
			lc.fail(err)
			return
		}
		var env struct {
			ID     string
			Kind   string
			Result *SendResult
			Error  *Error
		}
		if err := json.Unmarshal(body, &env); err != nil {
			lc.fail(err)
			return
		}
		lc.mu.Lock()
		want, ok := lc.want[env.ID]
		delete(lc.want, env.ID)
		lc.done++
		lc.mu.Unlock()
		switch {
		case !ok:
			lc.fail(fmt.Errorf("answer to %q, which is not under way (a second answer, or a stranger's)", env.ID))
			return
		case env.Kind != "response" || env.Error != nil || env.Result == nil:
			lc.fail(fmt.Errorf("answer %s", body))
			return
		case string(env.Result.Value) != want:
			lc.fail(fmt.Errorf("answer %s to the request for %s", env.Result.Value, want))
			return
		}
		<-slots
	}
}

// loadRun runs n clients dialled by dial for d; it returns the calls answered, and
// the time from the first request to the last answer (connecting is not counted).
func loadRun(t *testing.T, n int, d time.Duration, dial func() net.Conn) (int, time.Duration) {
	t.Helper()
	clients := make([]*loadClient, n)
	for i := range clients {
		clients[i] = &loadClient{nc: dial(), id: i, want: make(map[string]string)}
	}
	stop := make(chan struct{})
	start := time.Now()
	time.AfterFunc(d, func() { close(stop) }) // the run's length
	var wg sync.WaitGroup
	for _, lc := range clients {
		wg.Go(func() { lc.run(stop) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for _, lc := range clients {
		if lc.err != nil {
			t.Error(lc.err)
		}
		total += lc.done
	}
	return total, elapsed
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestRemoteLoad: 50 TLS clients make Send calls for -load (default 1 s), while
// another TLS client is killed in the middle of a Discover; every call is answered
// exactly once, nothing is left connected, in flight or open; then the same over
// the Unix socket, and the calls per second of both are reported.
func TestRemoteLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	p := newPKI(t)
	d := startRemote(t, p, nil)
	ctx := testCtx(t)
	if _, err := d.owner.Send(ctx, echoSend); err != nil { // the adapter is open before counting
		t.Fatal(err)
	}
	baseFDs, baseG := openFDs(t), goruntime.NumGoroutine()
	st0, err := d.owner.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}

	cfg := p.client(t, "caller")
	cfg.ServerName = "127.0.0.1"
	dialTLS := func() net.Conn {
		tc, err := tls.Dial("tcp", d.addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	// The Discover client, in its own process, killed once its stream has started.
	cert, key := p.issue(t, p.ca, certgen.Spec{CommonName: "caller"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=discover-client-tls", remoteAddrEnv+"="+d.addr,
		remotePKIEnv+"="+strings.Join([]string{p.caFile, cert, key}, string(os.PathListSeparator)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "found ") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			killed <- fmt.Errorf("discover client printed %q, want a found event; stderr %s", sc.Text(), stderr.String())
			return
		}
		<-time.After(*loadFor / 4) // mid-stream, mid-load
		err := cmd.Process.Kill()
		_ = cmd.Wait()
		killed <- err
	}()

	dialUnix := func() net.Conn {
		nc, err := net.Dial("unix", d.sock)
		if err != nil {
			t.Fatal(err)
		}
		return nc
	}
	// Two rounds of each transport, alternated, so that the machine's load drifting
	// (other tests run beside this one) does not favour either.
	var (
		tlsCalls, unixCalls int
		tlsTime, unixTime   time.Duration
		st2                 = st0
	)
	for round := range 2 {
		for _, tr := range []struct {
			name  string
			dial  func() net.Conn
			calls *int
			time  *time.Duration
		}{{"TLS", dialTLS, &tlsCalls, &tlsTime}, {"Unix socket", dialUnix, &unixCalls, &unixTime}} {
			n, el := loadRun(t, 50, *loadFor/2, tr.dial)
			*tr.calls += n
			*tr.time += el
			if round == 0 && tr.name == "TLS" {
				if err := <-killed; err != nil {
					t.Fatal(err)
				}
			}
			st := waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Clients == 1 && st.InFlight == 0 })
			if got := int(st.Calls - st2.Calls); got != n {
				t.Errorf("%s: the daemon made %d calls, the clients had %d answered", tr.name, got, n)
			}
			st2 = st
		}
	}
	if st2.RefusedClients != 0 || st2.DroppedClients != 0 || st2.Restarts != 0 || len(st2.Adapters) != 1 {
		t.Errorf("after the load: refused %d dropped %d restarts %d adapters %d", st2.RefusedClients, st2.DroppedClients, st2.Restarts, len(st2.Adapters))
	}
	// Nothing leaked: the daemon's descriptors and goroutines come back (goleak checks
	// the rest at the end of the test binary).
	waitFor(t, func() bool { return openFDs(t) <= baseFDs && goruntime.NumGoroutine() <= baseG })

	tlsRate, unixRate := float64(tlsCalls)/tlsTime.Seconds(), float64(unixCalls)/unixTime.Seconds()
	t.Logf("50 clients, %v each: TLS %d calls (%.0f calls/s), Unix socket %d calls (%.0f calls/s); TLS/Unix %.2f",
		*loadFor, tlsCalls, tlsRate, unixCalls, unixRate, tlsRate/unixRate)
	if tlsCalls == 0 || unixCalls == 0 {
		t.Error("no call answered")
	}
}

// BenchmarkTransport: Ping and Send round trips over the Unix socket and over TLS,
// from 8 connections at once: what the transport costs, the rest being equal.
func BenchmarkTransport(b *testing.B) {
	p := newPKI(b)
	d := startRemote(b, p, nil)
	cfg := p.client(b, "caller")
	for _, tr := range []struct {
		name string
		dial func() *Client
	}{
		{"unix", func() *Client { return dial(b, d.sock) }},
		{"tls", func() *Client { return dialRemote(b, d.addr, cfg) }},
	} {
		for _, m := range []string{"Ping", "Send"} {
			b.Run(tr.name+"/"+m, func(b *testing.B) {
				clients := make(chan *Client, 8)
				for range 8 {
					clients <- tr.dial()
				}
				ctx := context.Background()
				b.SetParallelism(8 / max(goruntime.GOMAXPROCS(0), 1))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					c := <-clients
					defer func() { clients <- c }()
					for pb.Next() {
						var err error
						if m == "Ping" {
							_, err = c.Ping(ctx)
						} else {
							_, err = c.Send(ctx, echoSend)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
