package controlplane

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

func tempSocket(t *testing.T) (sock, dir string) {
	t.Helper()
	d, err := os.MkdirTemp("", "cpi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	adapters := filepath.Join(d, "a")
	if err := os.Mkdir(adapters, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "s"), adapters
}

// runServer runs s until the test ends.
func runServer(t *testing.T, s *server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	s.cfg.OnReady = func() { close(ready) }
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// TestPeerOfAnotherUser: a client whose user (read with SO_PEERCRED /
// LOCAL_PEERCRED) is not the daemon's is closed without an answer. The test plays
// the other user by making the daemon expect a different uid.
func TestPeerOfAnotherUser(t *testing.T) {
	sock, dir := tempSocket(t)
	s, err := newServer(ServerConfig{Socket: sock, Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	uid, err := func() (int, error) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		return peerUID(a) // not a Unix socket: refused
	}()
	if err == nil || uid != -1 {
		t.Fatalf("peerUID of a pipe = %d, %v", uid, err)
	}
	s.uid = os.Getuid() + 1
	runServer(t, s)
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The daemon says why before it closes the connection, whether the request was
	// written before (then unread) or after (a broken pipe, the answer read anyway).
	_, err = c.Ping(context.Background())
	var cpe *Error
	if !errors.As(err, &cpe) || cpe.Code != CodePermissionDenied ||
		!strings.Contains(cpe.Message, fmt.Sprintf("answers only clients of its own user, uid %d", s.uid)) {
		t.Fatalf("Ping from another user = %v, want permission_denied naming the daemon's user", err)
	}
	if n := s.refused.Load(); n != 1 {
		t.Fatalf("refused %d, want 1", n)
	}
}

// TestPeerUID: the kernel reports this process's own user for a real connection.
func TestPeerUID(t *testing.T) {
	sock, _ := tempSocket(t)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("unix", sock)
		if err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	uid, err := peerUID(nc)
	if err != nil || uid != os.Getuid() {
		t.Fatalf("peerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

// TestSocketFile: the socket is created owner-only, a second daemon on it is
// refused, a stale socket is replaced, a file that is not a socket is not, and the
// socket is removed at shutdown.
func TestSocketFile(t *testing.T) {
	sock, dir := tempSocket(t)

	// A stale socket: bound, then abandoned without removing the file.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	_ = l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServerConfig{Socket: sock, Dirs: []string{dir}, OnReady: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(sock))
	if len(entries) != 2 { // the socket and the adapter directory: no leftover temp dir
		t.Errorf("directory holds %d entries", len(entries))
	}
	if err := Serve(context.Background(), ServerConfig{Socket: sock, Dirs: []string{dir}}); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("second Serve = %v, want ErrSocketInUse", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left after shutdown: %v", err)
	}

	if err := os.WriteFile(sock, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), ServerConfig{Socket: sock, Dirs: []string{dir}}); !errors.Is(err, ErrConfig) {
		t.Errorf("Serve over a regular file = %v, want ErrConfig", err)
	}
	if b, _ := os.ReadFile(sock); string(b) != "keep me" {
		t.Error("a regular file was replaced")
	}
}

func TestServeConfig(t *testing.T) {
	sock, dir := tempSocket(t)
	ctx := context.Background()
	for _, cfg := range []ServerConfig{
		{Dirs: []string{dir}},
		{Socket: sock},
		{Socket: sock, Dirs: []string{"relative"}},
		{Socket: sock, Dirs: []string{filepath.Join(dir, "missing")}},
	} {
		if err := Serve(ctx, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("Serve(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Serve(cctx, ServerConfig{Socket: sock, Dirs: []string{dir}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Serve with an ended context = %v", err)
	}
}

// TestMapError: every adapter-layer outcome maps to its stable code; internal is
// what nothing else explains.
func TestMapError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code Code
	}{
		{"not advertised", &runtime.CallError{Code: wire.CodeUnavailable, NeverStarted: true, Cause: runtime.ErrUnknownMethod}, CodeNotImplemented},
		{"adapter invalid", &runtime.CallError{Code: wire.CodeInvalid, RawCode: "invalid"}, CodeInvalidParams},
		{"request too large", &runtime.CallError{Code: wire.CodeInvalid, NeverStarted: true, Cause: runtime.ErrRequestTooLarge}, CodeInvalidParams},
		{"adapter busy", &runtime.CallError{Code: wire.CodeBusy, RawCode: "busy"}, CodeTransportError},
		{"violation", &runtime.CallError{Code: wire.CodeClosed, Uncertain: true, Cause: &wire.ViolationError{Kind: wire.UnknownReply}}, CodeTransportError},
		{"gave up", &runtime.CallError{Code: wire.CodeClosed, NeverStarted: true, Cause: lifecycle.ErrGaveUp}, CodeTransportError},
		{"open failed", &lifecycle.OpenError{Stage: lifecycle.StageHandshake, Err: errors.New("x")}, CodeTransportError},
		{"registry closed", fmt.Errorf("open: %w", runtime.ErrClosed), CodeInternal},
		{"cancelled", context.Canceled, CodeInternal},
		{"deadline while opening", context.DeadlineExceeded, CodeTransportError},
		{"unexpected", errors.New("boom"), CodeInternal},
	} {
		e := mapError(tc.err, "/a/x_v1.0.0", "x.y")
		if e.Code != tc.code {
			t.Errorf("%s: code %s, want %s", tc.name, e.Code, tc.code)
		}
		if d, ok := e.CallDetails(); !ok || d.Adapter != "/a/x_v1.0.0" {
			t.Errorf("%s: details %+v", tc.name, d)
		}
	}
	e := mapError(&runtime.CallError{Code: wire.CodeClosed, Uncertain: true, Cause: &wire.ViolationError{Kind: wire.UnknownReply}}, "/p", "m")
	if d, _ := e.CallDetails(); d.Violation != wire.UnknownReply.String() || !d.Uncertain || d.AdapterCode != "closed" {
		t.Errorf("violation details %+v", d)
	}
	// An adapter that exited during its handshake: initialize's outcome is uncertain,
	// but the call was never sent.
	exited := &wire.ViolationError{Kind: wire.ProcessExited}
	e = mapError(&lifecycle.OpenError{Stage: lifecycle.StageHandshake,
		Err: &runtime.CallError{Method: "system.adapter.initialize", ID: 1, Code: wire.CodeClosed, Uncertain: true, Cause: exited}}, "/p", "m")
	if d, _ := e.CallDetails(); e.Code != CodeTransportError || !d.NeverStarted || d.Uncertain || d.Stage != "handshake" ||
		d.AdapterCode != "closed" || d.Violation != wire.ProcessExited.String() {
		t.Errorf("start failure: %s %+v, want never started, stage handshake", e.Code, d)
	}
	// A call that failed uncertain after a restart's start failed keeps its own outcome.
	e = mapError(&runtime.CallError{Method: "m", ID: 3, Code: wire.CodeClosed, Uncertain: true,
		Cause: &lifecycle.OpenError{Stage: lifecycle.StageSpawn, Err: errors.New("x")}}, "/p", "m")
	if d, _ := e.CallDetails(); !d.Uncertain || d.NeverStarted {
		t.Errorf("uncertain call: %+v, want it uncertain", d)
	}
}

// TestOversizedAnswer: an answer that would exceed the frame cap is never sent; the
// request is answered with internal instead.
func TestOversizedAnswer(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	s, err := newServer(ServerConfig{Socket: "x", Dirs: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	c := newServerConn(context.Background(), s, a)
	id := newID()
	c.respond(id, map[string]string{"big": strings.Repeat("x", maxFrame)}, nil)
	c.w.Close()
	fr := frameReader{r: b}
	_ = b.SetReadDeadline(time.Now().Add(30 * time.Second))
	body, err := fr.read()
	if err != nil {
		t.Fatal(err)
	}
	<-c.w.Done()
	c.kill()
	var got envelope
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Error == nil || got.Error.Code != CodeInternal {
		t.Fatalf("answer %s", body)
	}
}

// TestSocketCannotBeCreated: a socket path whose directory is missing, or that is too
// long for a socket address (the socket is bound under a shorter temporary name, so
// bind alone would not notice), is refused with ErrSocket, and nothing is left behind.
func TestSocketCannotBeCreated(t *testing.T) {
	sock, dir := tempSocket(t)
	for _, p := range []string{
		filepath.Join(filepath.Dir(sock), "missing", "s"),
		filepath.Join(filepath.Dir(sock), strings.Repeat("x", 200)),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // only a bound
		err := Serve(ctx, ServerConfig{Socket: p, Dirs: []string{dir}})
		cancel()
		if !errors.Is(err, ErrSocket) {
			t.Errorf("Serve on %s = %v, want ErrSocket", p, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(sock))
	if len(entries) != 1 { // the adapter directory
		t.Errorf("directory holds %d entries", len(entries))
	}
}

// TestFrameMemoryFollowsBytes: a frame header announcing 16 MiB followed by a few
// bytes (a client that then stalls, or leaves) costs memory for the bytes that came,
// not for the size announced: otherwise MaxClients stalled clients would pin
// MaxClients × 16 MiB.
func TestFrameMemoryFollowsBytes(t *testing.T) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], maxFrame)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range 4 {
		fr := frameReader{r: io.MultiReader(bytes.NewReader(hdr[:]), strings.NewReader(`{"id":`))}
		if _, err := fr.read(); !errors.Is(err, proto.ErrFrameTruncated) {
			t.Fatalf("read = %v, want proto.ErrFrameTruncated", err)
		}
	}
	goruntime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("4 truncated frames of a few bytes allocated %d bytes", got)
	}
	// A whole frame still reads whole.
	body := bytes.Repeat([]byte("x"), 3<<20+17)
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	fr := frameReader{r: io.MultiReader(bytes.NewReader(hdr[:]), iotest.OneByteReader(bytes.NewReader(body[:100])), bytes.NewReader(body[100:]))}
	got, err := fr.read()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(body))
	}
}

// TestConcurrentStarts: daemons started at once on the same path: exactly one
// serves, the others are refused with ErrSocketInUse; none replaces the socket of
// another that is already serving (which would go on running unreachable).
func TestConcurrentStarts(t *testing.T) {
	sock, dir := tempSocket(t)
	const n = 6
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		ready bool
		err   error
	}
	results := make(chan outcome, 2*n)
	for range n {
		go func() {
			err := Serve(ctx, ServerConfig{Socket: sock, Dirs: []string{dir},
				OnReady: func() { results <- outcome{ready: true} }})
			results <- outcome{err: err}
		}()
	}
	ready, refused := 0, 0
	for ready+refused < n {
		o := <-results
		switch {
		case o.ready:
			ready++
		case errors.Is(o.err, ErrSocketInUse):
			refused++
		default:
			t.Fatalf("Serve = %v", o.err)
		}
	}
	cancel()
	for range ready {
		if o := <-results; o.err != nil {
			t.Errorf("Serve after shutdown = %v", o.err)
		}
	}
	if ready != 1 {
		t.Errorf("%d daemons served on one socket path, want 1 (%d refused)", ready, refused)
	}
}

// TestSocketSymlink: a socket path that is a symlink (to a file of value, or to a
// stale socket) is never followed, replaced nor removed.
func TestSocketSymlink(t *testing.T) {
	sock, dir := tempSocket(t)
	valuable := filepath.Join(filepath.Dir(sock), "valuable")
	if err := os.WriteFile(valuable, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(valuable, sock); err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), ServerConfig{Socket: sock, Dirs: []string{dir}}); !errors.Is(err, ErrConfig) {
		t.Errorf("Serve on a symlink = %v, want ErrConfig", err)
	}
	if b, _ := os.ReadFile(valuable); string(b) != "keep me" {
		t.Error("the symlink's target was changed")
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", fi, err)
	}
}

// A caller gone is told so even when the scan it joined has already ended (both cases
// of the wait are ready then, and a select picks either).
func TestRescanCallerGoneAfterScan(t *testing.T) {
	scanWaitHook = func(done <-chan struct{}) { <-done }
	t.Cleanup(func() { scanWaitHook = nil })
	cfg := &ServerConfig{Dirs: []string{t.TempDir()}, RescanInterval: time.Nanosecond}
	set := newAdapterSet(context.Background(), cfg, hclog.NewNullLogger(), nil)
	defer func() { _ = set.close(context.Background()) }()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 32 {
		if _, err := set.rescan(gone); !errors.Is(err, context.Canceled) {
			t.Fatalf("rescan %d of a caller gone: %v", i, err)
		}
	}
}

// TestSharedScan: Discover streams asking for a scan at once share one, and so do
// those asking within the rescan interval after it ended; a caller that gives up
// does not end the scan for the others.
func TestSharedScan(t *testing.T) {
	var scans atomic.Int32
	scanHook = func() { scans.Add(1) }
	t.Cleanup(func() { scanHook = nil })
	base, stop := context.WithCancel(context.Background())
	defer stop()
	cfg := &ServerConfig{Dirs: []string{t.TempDir()}, RescanInterval: time.Minute}
	set := newAdapterSet(base, cfg, hclog.NewNullLogger(), nil)
	defer func() { _ = set.close(context.Background()) }()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := set.rescan(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("rescan of a caller gone: %v", err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := set.rescan(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := scans.Load(); n != 1 {
		t.Fatalf("17 rescans within the interval scanned %d times, want once", n)
	}
}
