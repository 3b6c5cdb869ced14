//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// The part of the rogue adapter's service (rogue.test version 1) that TestHostInput
// calls typed; echo takes any value, so that values which do not encode can be passed.
var (
	rogueService = contract.NewService("rogue.test", 1)
	rogueStats   = contract.NewMethod[struct{}, rogueCounts](rogueService, "stats")
	rogueEcho    = contract.NewMethod[any, json.RawMessage](rogueService, "echo")
)

// rogueCounts is the result of rogue.test.stats.
type rogueCounts struct {
	Requests int `json:"requests"`
	Cancels  int `json:"cancels"`
}

// survivor is an adapter open in a registry while the host feeds that registry bad
// input; after every case it must still answer, with its own token.
type survivor struct {
	h *registry.Handle
	c *registry.Client // of rogueService
	n int
}

func (s *survivor) check(t *testing.T) {
	t.Helper()
	s.n++
	want := fmt.Sprintf(`{"survivor":%d}`, s.n)
	got, err := s.h.Call(stepCtx(t), "rogue.test.echo", json.RawMessage(want))
	if err != nil || string(got) != want {
		t.Fatalf("open adapter disturbed: %s, %v", got, err)
	}
}

// requests is how many requests the rogue adapter has received so far.
func (s *survivor) requests(t *testing.T) int {
	t.Helper()
	st, err := registry.Call(stepCtx(t), s.c, rogueStats, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	return st.Requests - 1 // not counting this call
}

// junkDir fills a directory with everything a package directory should not hold.
func junkDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("README.txt", "not an adapter", 0o644)
	write("garbage_v1.0.0", "\x7fELF? no: random bytes \x00\x01\x02", 0o755)
	// It stays alive after printing: one that exits at once races its own exit against
	// the host reading the text, and either may be reported first.
	write("script_v1.0.0", "#!/bin/sh\necho hello from a script adapter\nexec sleep 60\n", 0o755)
	write("noexec_v1.0.0", "#!/bin/sh\n", 0o644)
	write("badversion_v1.x", "#!/bin/sh\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "subdir_v1.0.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling_v1.0.0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/true", filepath.Join(dir, "escape_v1.0.0")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Bad input from the host's own side (R41, R58, R61, A31, A33): each case returns a
// clear typed error, starts nothing that keeps running, and leaves every open adapter
// working.
func TestHostInput(t *testing.T) {
	comp := openCompanion(t)
	rogue := buildBinT(t, "rogue")
	junk := junkDir(t)
	reg := registry.New(&registry.Config{Dirs: []string{junk}, Env: rogueEnv("serve"), Limits: rogueLimits()})
	t.Cleanup(func() {
		if err := reg.Close(context.Background()); err != nil {
			t.Errorf("registry close: %v", err)
		}
	})
	h, err := reg.Open(stepCtx(t), rogue, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := registry.NewClient(h, rogueService)
	if err != nil {
		t.Fatal(err)
	}
	s := &survivor{h: h, c: c}
	// Everything this test process runs now (the survivor and the companion, with
	// their trees); after each case nothing else may run below it, whatever binary it
	// is (the script adapter execs `sleep 60`).
	baseline := map[testkit.Proc]bool{}
	for _, p := range testkit.Descendants(os.Getpid()) {
		baseline[p] = true
	}
	after := func(t *testing.T) {
		t.Helper()
		s.check(t)
		comp.check(t)
		if left := procsRunning(rogue); len(left) != 1 || left[0] != h.Status().Pid {
			t.Fatalf("rogue processes %v, want only the survivor %d", left, h.Status().Pid)
		}
		for _, p := range testkit.Descendants(os.Getpid()) {
			if !baseline[p] {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid))
				t.Errorf("process %d (%s) started by this case still runs", p.Pid, strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}

	t.Run("configuration not an object", func(t *testing.T) {
		for _, cfg := range []any{42, []string{"a"}, "text", map[string]any{"c": make(chan int)}} {
			_, err := reg.Open(stepCtx(t), rogue, cfg)
			var oe *lifecycle.OpenError
			if !errors.As(err, &oe) || oe.Stage != lifecycle.StageConfig || !errors.Is(err, registry.ErrEncode) {
				t.Fatalf("Open(%T) = %v, want a config-stage encode error", cfg, err)
			}
		}
		for _, raw := range []json.RawMessage{json.RawMessage(`{bad`), json.RawMessage(`[1]`), json.RawMessage(`{} {}`)} {
			_, err := reg.Open(stepCtx(t), rogue, raw)
			var oe *lifecycle.OpenError
			if !errors.As(err, &oe) || oe.Stage != lifecycle.StageConfig || !errors.Is(err, runtime.ErrInvalidParams) {
				t.Fatalf("Open(%s) = %v, want a config-stage invalid configuration", raw, err)
			}
		}
		after(t)
	})

	t.Run("params", func(t *testing.T) {
		before := s.requests(t)
		// Typed params that do not encode, or not to a JSON object, fail before anything
		// is sent: a never-started invalid *runtime.CallError around an encode error (registry.ErrEncode).
		for _, p := range []any{make(chan int), []int{1}, 7, func() {}, struct{ C chan int }{make(chan int)}} {
			_, err := registry.Call(stepCtx(t), s.c, rogueEcho, p)
			var ce *runtime.CallError
			if !errors.As(err, &ce) || runtime.CodeOf(err) != wire.CodeInvalid || !runtime.IsNeverStarted(err) ||
				!errors.Is(err, registry.ErrEncode) {
				t.Fatalf("Call(%T) = %v, want invalid, never started, encode error", p, err)
			}
		}
		// A contract method whose params type cannot be sent at all is refused where it
		// is declared (NewMethod panics): no client can be bound to it, so no call made.
		type unencodable struct {
			Done chan struct{} `json:"done"`
			Hook func()        `json:"hook"`
		}
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, contract.ErrInvalid) ||
					!strings.Contains(err.Error(), `method "rogue.test.echo" params: field "done": chan struct {} cannot be sent`) {
					t.Fatalf("NewMethod(unencodable) panicked with %v, want the declaration refused", err)
				}
			}()
			contract.NewMethod[unencodable, json.RawMessage](contract.NewService("rogue.test", 1), "echo")
		}()
		// A value that cannot encode (a NaN) fails before anything is sent: the codec's
		// error (encoding/json's unsupported value) is the cause.
		_, err := registry.Call(stepCtx(t), s.c, rogueEcho, any(map[string]float64{"x": math.NaN()}))
		var ce *runtime.CallError
		var uve *json.UnsupportedValueError
		if !errors.As(err, &ce) || ce.Code != wire.CodeInvalid || !ce.NeverStarted ||
			!errors.Is(err, registry.ErrEncode) || !errors.As(err, &uve) {
			t.Fatalf("Call(NaN) = %v, want invalid, never started, the codec's encode error", err)
		}
		for _, raw := range []string{`[1]`, `{"a":`, `{}{}`, "{\"a\":\"\xff\"}"} {
			_, err := h.Call(stepCtx(t), "rogue.test.echo", json.RawMessage(raw))
			if runtime.CodeOf(err) != wire.CodeInvalid || !runtime.IsNeverStarted(err) || !errors.Is(err, runtime.ErrInvalidParams) {
				t.Fatalf("Call(%q) = %v, want invalid params, never started", raw, err)
			}
		}
		// R58, A3: a request above the frame limit is refused and the connection goes on.
		huge := json.RawMessage(`{"pad":"` + strings.Repeat("x", limits.MaxFrameSize) + `"}`)
		if _, err := h.Call(stepCtx(t), "rogue.test.echo", huge); !errors.Is(err, runtime.ErrRequestTooLarge) ||
			runtime.CodeOf(err) != wire.CodeInvalid || !runtime.IsNeverStarted(err) {
			t.Fatalf("oversized request = %v", err)
		}
		if n := s.requests(t); n != before+1 { // only the stats call between
			t.Fatalf("%d requests reached the adapter, want none", n-before-1)
		}
		after(t)
	})

	t.Run("method not in catalog", func(t *testing.T) {
		before := s.requests(t)
		for _, m := range []string{"rogue.test.nope", "other.service.m", "", "system.adapter.initialize"} {
			_, err := h.Call(stepCtx(t), m, nil)
			if runtime.CodeOf(err) != wire.CodeUnavailable || !errors.Is(err, runtime.ErrUnknownMethod) || !runtime.IsNeverStarted(err) {
				t.Fatalf("Call(%q) = %v, want unavailable, unknown method, never started", m, err)
			}
		}
		if n := s.requests(t); n != before+1 {
			t.Fatalf("%d refused requests reached the adapter (R41)", n-before-1)
		}
		after(t)
	})

	t.Run("nil context", func(t *testing.T) {
		var nilCtx context.Context // a caller's mistake the API must answer with an error
		panicked := func(f func() error) (p any, err error) {
			defer func() { p = recover() }()
			return nil, f()
		}
		var panics []string
		for _, c := range []struct {
			name string
			f    func() error
			ok   func(error) bool
		}{
			{"Handle.Call", func() error { _, err := h.Call(nilCtx, "rogue.test.echo", nil); return err },
				func(err error) bool {
					return errors.Is(err, runtime.ErrNilContext) && runtime.CodeOf(err) == wire.CodeInvalid && runtime.IsNeverStarted(err)
				}},
			{"Registry.Open", func() error { _, err := reg.Open(nilCtx, rogue, nil); return err },
				func(err error) bool { return errors.Is(err, runtime.ErrNilContext) }},
			{"lifecycle.Open", func() error { _, err := lifecycle.Open(nilCtx, lifecycle.Config{Path: rogue}); return err },
				func(err error) bool {
					var oe *lifecycle.OpenError
					return errors.As(err, &oe) && errors.Is(err, runtime.ErrNilContext)
				}},
		} {
			p, err := panicked(c.f)
			switch {
			case p != nil:
				panics = append(panics, fmt.Sprintf("%s panics: %v", c.name, p))
			case !c.ok(err):
				t.Fatalf("%s with a nil context = %v, want a typed error", c.name, err)
			}
		}
		after(t) // whatever happened, nothing else is disturbed
		if len(panics) > 0 {
			t.Fatalf("a nil context must be answered with a typed error, not a panic: %s", strings.Join(panics, "; "))
		}
	})

	t.Run("paths", func(t *testing.T) {
		for _, ref := range []string{"bin/rogue", "./rogue", "../e2e/rogue"} {
			if _, err := reg.Open(stepCtx(t), ref, nil); !errors.Is(err, platform.ErrNotAbsolute) {
				t.Fatalf("Open(%q) = %v, want ErrNotAbsolute", ref, err)
			}
		}
		_, err := lifecycle.Open(stepCtx(t), lifecycle.Config{Path: "rogue"})
		if !errors.Is(err, platform.ErrNotAbsolute) {
			t.Fatalf("lifecycle.Open(relative) = %v", err)
		}
		for _, c := range []struct {
			path string
			is   error
		}{
			{"/nonexistent/rogue_v1.0.0", platform.ErrNotFound},
			{junk, platform.ErrNotRegular},
			{filepath.Join(junk, "noexec_v1.0.0"), platform.ErrNotExecutable},
			{filepath.Join(junk, "garbage_v1.0.0"), syscall.ENOEXEC},
		} {
			_, err := reg.Open(stepCtx(t), c.path, nil)
			var oe *lifecycle.OpenError
			if !errors.As(err, &oe) || oe.Stage != lifecycle.StageSpawn || !errors.Is(err, c.is) {
				t.Fatalf("Open(%s) = %v, want a spawn error %v", c.path, err, c.is)
			}
		}
		after(t)
	})

	t.Run("directory of junk", func(t *testing.T) {
		res, err := reg.Discover(stepCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, a := range res.Adapters {
			found = append(found, a.Name)
		}
		if !slices.Equal(found, []string{"garbage", "script"}) {
			t.Fatalf("adapters found = %v", found)
		}
		reasons := map[string]discovery.Reason{}
		for _, r := range res.Rejected {
			reasons[filepath.Base(r.Path)] = r.Reason
		}
		want := map[string]discovery.Reason{
			"README.txt": discovery.BadName, "noexec_v1.0.0": discovery.NotExecutable,
			"badversion_v1.x": discovery.BadVersion, "subdir_v1.0.0": discovery.NotRegular,
			"dangling_v1.0.0": discovery.Unreadable, "escape_v1.0.0": discovery.LinkLeavesDir,
		}
		for name, r := range want {
			if reasons[name] != r {
				t.Errorf("%s rejected as %v, want %v", name, reasons[name], r)
			}
		}
		// Refs that select nothing, or something that is not an adapter.
		checks := []struct {
			ref string
			is  error
		}{
			{"noexec", discovery.ErrNotFound},
			{"missing", discovery.ErrNotFound},
			{"garbage@>= 2", discovery.ErrNoMatchingVersion},
			{"bad name!", discovery.ErrRefName},
			{"garbage", syscall.ENOEXEC},
			// A script that prints text: its first 4 bytes are an oversized length (R53).
			{"script", wire.Output},
		}
		for _, c := range checks {
			_, err := reg.Open(stepCtx(t), c.ref, nil)
			if !errors.Is(err, c.is) {
				t.Fatalf("Open(%q) = %v, want %v", c.ref, err, c.is)
			}
			var oe *lifecycle.OpenError
			if errors.As(err, &oe) && oe.Cleanup != nil {
				t.Fatalf("Open(%q): cleanup not verified: %v", c.ref, oe.Cleanup)
			}
		}
		if _, err := reg.Open(stepCtx(t), "script", nil); !errors.Is(err, proto.ErrFrameTooLarge) {
			t.Fatalf("script adapter: %v", err)
		}
		after(t)
	})

	t.Run("closed registry", func(t *testing.T) {
		other := registry.New(&registry.Config{Env: rogueEnv("serve"), Limits: rogueLimits()})
		oh, err := other.Open(stepCtx(t), rogue, nil)
		if err != nil {
			t.Fatal(err)
		}
		pid := oh.Status().Pid
		if err := other.Close(stepCtx(t)); err != nil {
			t.Fatalf("Close: %v", err)
		}
		requireGone(t, "/nonexistent", pid)
		if _, err := other.Open(stepCtx(t), rogue, nil); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Open after Close = %v", err)
		}
		if _, err := other.Lookup(stepCtx(t), rogue); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Lookup after Close = %v", err)
		}
		if _, err := other.Discover(stepCtx(t)); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("Discover after Close = %v", err)
		}
		if _, err := oh.Call(stepCtx(t), "rogue.test.echo", nil); runtime.CodeOf(err) != wire.CodeClosed ||
			!runtime.IsNeverStarted(err) || !errors.Is(err, lifecycle.ErrGaveUp) {
			t.Fatalf("call on a closed registry's handle = %v", err)
		}
		if err := other.Close(stepCtx(t)); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		after(t)
	})
}

// No descriptor of the host leaks into an adapter: even descriptors the host opened
// without close-on-exec are not inherited. The adapter lists /proc/self/fd itself; only
// 0, 1, 2 and what its own Go runtime created (the poller's eventpoll and eventfd, the
// cgroup CPU limit files, and the directory it is reading) may be there; a host pidfd
// made inheritable is one of the canaries. Standard error is a pipe of the host's, which
// reads it (for a failed start's report) and drops it (R8, A27), never a file of the host.
func TestAdapterInheritsNoHostFDs(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], 0); err != nil { // deliberately without O_CLOEXEC
		t.Fatal(err)
	}
	f, err := unix.Open(buildBinT(t, "rogue"), unix.O_RDONLY, 0) // without O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	defer unix.Close(f)
	// A pidfd of the host's, made inheritable: a leaked one must not pass as one of the
	// adapter runtime's own anonymous inodes.
	pfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	if _, err := unix.FcntlInt(uintptr(pfd), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	host := fdTable(t)
	canaries := map[string]bool{host[p[0]]: true, host[p[1]]: true, host[f]: true, host[pfd]: true}

	a := openRogue(t, "serve", nil)
	var fds []struct {
		FD     int
		Target string
	}
	raw, err := a.Call(stepCtx(t), "rogue.test.fds", nil)
	if err == nil {
		err = json.Unmarshal(raw, &fds)
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, fd := range fds {
		seen[fd.FD] = fd.Target
		switch {
		case canaries[fd.Target]:
			t.Errorf("host descriptor leaked into the adapter: fd %d -> %s", fd.FD, fd.Target)
		case fd.FD <= 2:
		case fd.Target == "anon_inode:[eventpoll]" || fd.Target == "anon_inode:[eventfd]":
			// The Go runtime's network poller and its wakeup; nothing else anonymous
			// (a pidfd, a signalfd, an inotify instance) is the adapter's own.
		case strings.HasPrefix(fd.Target, "/sys/fs/cgroup/") &&
			strings.Contains(filepath.Base(fd.Target), "cpu."):
			// Go's runtime keeps the cgroup CPU limit files open to follow
			// GOMAXPROCS (Go 1.25+); the host's copies are close-on-exec.
		case fd.Target == fmt.Sprintf("/proc/%d/fd", a.Pid()): // the directory being listed
		default:
			t.Errorf("unexpected descriptor in the adapter: fd %d -> %s", fd.FD, fd.Target)
		}
	}
	if !strings.HasPrefix(seen[0], "pipe:") || !strings.HasPrefix(seen[1], "pipe:") || !strings.HasPrefix(seen[2], "pipe:") {
		t.Errorf("standard descriptors = %q %q %q, want three pipes", seen[0], seen[1], seen[2])
	}
	t.Logf("adapter descriptors: %v", seen)
}

// The environment an adapter receives is only what the host chose, in lifecycle and in
// registry; nothing of the host's own environment is inherited.
func TestAdapterEnvironmentIsExplicit(t *testing.T) {
	t.Setenv("ADAPTERKIT_E2E_CANARY", "host-secret")
	env := func(t *testing.T, call func(ctx context.Context, method string) (json.RawMessage, error)) []string {
		t.Helper()
		raw, err := call(stepCtx(t), "rogue.test.env")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := rogueEnv("serve", "ONLY=this", "EMPTY=")
	a := openRogue(t, "serve", func(c *lifecycle.Config) { c.Env = want })
	if got := env(t, func(ctx context.Context, m string) (json.RawMessage, error) { return a.Call(ctx, m, nil) }); !slices.Equal(got, want) {
		t.Fatalf("lifecycle: adapter environment = %q, want exactly %q", got, want)
	}
	for _, regEnv := range [][]string{nil, rogueEnv("serve", "X=1")} {
		reg := registry.New(&registry.Config{Env: regEnv})
		h, err := reg.Open(stepCtx(t), buildBinT(t, "rogue"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := env(t, func(ctx context.Context, m string) (json.RawMessage, error) { return h.Call(ctx, m, nil) })
		if err := reg.Close(stepCtx(t)); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(regEnv) || (len(regEnv) > 0 && !slices.Equal(got, regEnv)) {
			t.Fatalf("registry: adapter environment = %q, want exactly %q", got, regEnv)
		}
	}
}
