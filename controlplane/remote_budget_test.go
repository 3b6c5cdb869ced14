package controlplane

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// dialRawTLS returns a hand-written client on a remote daemon, its handshake done.
func dialRawTLS(t *testing.T, addr string, cfg *tls.Config) *rawConn {
	t.Helper()
	cfg = cfg.Clone()
	cfg.ServerName = "127.0.0.1"
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc}
}

// paddedDiscover is a Discover request of exactly size bytes (whitespace after its
// params), lasting ten minutes.
func paddedDiscover(id string, size int) []byte {
	b := []byte(`{"id":"` + id + `","kind":"request","method":"Discover","params":{"timeout_ms":600000}`)
	b = append(b, bytes.Repeat([]byte{' '}, size-len(b)-1)...)
	return append(b, '}')
}

// TestRemoteReadBudget: a remote client whose role calls no method taking large params
// (read, logs) holds little of the daemon's memory whatever it sends. Each of eight
// read clients fills its connection's budget with Discovers of the largest size taken
// (16 KiB, held ten minutes), sends one more (refused: frame_too_large with its id), and
// leaves a frame unfinished; a second connection of each announces a 16 MiB Discover
// and sends half of it (refused at the header: frame_too_large, role in the details,
// and the connection closed, the body never read). The daemon's heap grows by at most
// what the bounds allow: readBudget + maxSmallBody per connection, plus what a TLS
// connection costs at both ends of this in-process test. (Before the bounds, each
// client pinned 32 MiB of bodies and an unfinished 16 MiB frame.)
func TestRemoteReadBudget(t *testing.T) {
	p := newPKI(t)
	d := startRemote(t, p, func(cfg *ServerConfig) { cfg.Dirs = []string{adapterDir(t)} }) // no event: Discovers only wait
	cfg := p.client(t, "reader")
	half := make([]byte, maxFrame/2)
	const n = 8
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)

	held := make([]*rawConn, n)
	refused := make([]string, n)
	big := make([]*rawConn, n)
	for i := range n {
		r := dialRawTLS(t, d.addr, cfg)
		held[i] = r
		for range readBudget / maxSmallBody {
			r.writeFrame(paddedDiscover(newID(), maxSmallBody))
		}
		refused[i] = newID()
		r.writeFrame(paddedDiscover(refused[i], maxSmallBody))
		// An unfinished frame: its header, and three quarters of its body.
		r.writeHeader(maxSmallBody)
		if _, err := r.nc.Write(bytes.Repeat([]byte{' '}, maxSmallBody*3/4)); err != nil {
			t.Fatal(err)
		}

		b := dialRawTLS(t, d.addr, cfg)
		big[i] = b
		b.writeHeader(maxFrame)
		_, _ = b.nc.Write(half) // the daemon closes the connection on the header
	}
	for i, r := range held {
		env := r.read()
		r.wantError(env, refused[i], CodeFrameTooLarge)
		var det struct{ Size, Budget int }
		if err := json.Unmarshal(env.Error.Details, &det); err != nil || det.Budget != readBudget {
			t.Fatalf("details %s (%v), want the budget %d", env.Error.Details, err, readBudget)
		}
	}
	// The refused connections are gone; the others hold what they sent.
	waitStatus(t, d.owner, func(st *StatusResult) bool { return st.Clients == n+1 })

	goruntime.GC()
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(half) // allocated before the first measure
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// The bounds (80 KiB a connection), and 300 KiB a connection for TLS at both ends
	// and the requests' bookkeeping.
	limit := int64(n * (readBudget + maxSmallBody + 300<<10))
	t.Logf("%d read clients holding 4 Discovers and an unfinished frame each, and %d refused 16 MiB frames: heap grew by %d KiB (bound %d KiB)",
		n, n, grown>>10, limit>>10)
	if grown > limit {
		t.Errorf("heap grew by %d bytes, want at most %d", grown, limit)
	}

	for _, b := range big {
		env := b.read()
		b.wantError(env, "", CodeFrameTooLarge)
		var det struct {
			Size, Max int
			Role      Role
		}
		if err := json.Unmarshal(env.Error.Details, &det); err != nil || det.Max != maxSmallBody || det.Role != RoleRead || det.Size != maxFrame {
			t.Fatalf("details %s (%v)", env.Error.Details, err)
		}
		b.wantEOF()
	}

	// The Go client gets the typed error, and its connection ends with it.
	c := dialRemote(t, d.addr, cfg)
	_, err := c.Call(testCtx(t), methodDiscover, map[string]any{"timeout_ms": 1000, "pad": strings.Repeat("x", 1<<20)}, func(json.RawMessage) error { return nil })
	e := wantCode(t, err, CodeFrameTooLarge)
	if !strings.Contains(e.Message, "role read") {
		t.Errorf("message %q does not name the role", e.Message)
	}
	<-c.Done()
}

// TestLimitsByRole: the bounds follow what the role may call: only a client that may
// Send gets the frame cap and the large budget.
func TestLimitsByRole(t *testing.T) {
	big := connLimits{frame: maxFrame, budget: connBudget, requests: maxConnRequests}
	small := connLimits{frame: maxSmallBody, budget: readBudget, requests: readRequests}
	for _, tc := range []struct {
		p    perms
		want connLimits
	}{
		{ownerPerms, big},
		{perms{role: RoleCall}, big},
		{perms{role: RoleLogs}, small},
		{perms{role: RoleRead}, small},
		{perms{role: "unknown"}, small},
	} {
		if got := limitsFor(tc.p); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.p, got, tc.want)
		}
	}
	if readBudget+maxSmallBody != 80<<10 {
		t.Errorf("a read connection holds up to %d bytes; the docs say 80 KiB", readBudget+maxSmallBody)
	}
}
