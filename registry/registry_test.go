package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/codec"
	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

var adapterDir string

func TestMain(m *testing.M) {
	testkit.Main(m, &adapterDir, func(r testkit.Runner) { goleak.VerifyTestMain(r) },
		testkit.Echo, testkit.Build{Pkg: testkit.Echo.Pkg, Name: "echo_v2.0.0-beta.1"}, testkit.Thermometer, testkit.Versioned, testkit.Blobs)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// echoClient is a typed client of example.echo as a host would write it: a wrapper
// around the client NewClient returns.
type echoClient struct{ c *registry.Client }

func newEchoClient(h *registry.Handle) (*echoClient, error) {
	c, err := registry.NewClient(h, echoService)
	if err != nil {
		return nil, err
	}
	return &echoClient{c}, nil
}

type sleepArgs struct {
	MS int `json:"ms"`
}

func (e *echoClient) Echo(ctx context.Context, in map[string]any) (map[string]any, error) {
	return registry.Call(ctx, e.c, echoMap, in)
}

func (e *echoClient) Sleep(ctx context.Context, ms int) (sleepArgs, error) {
	return registry.Call(ctx, e.c, echoSleep, sleepArgs{MS: ms})
}

var (
	echoService = contract.NewService("example.echo", 1)
	echoMap     = contract.NewMethod[map[string]any, map[string]any](echoService, "echo")
	echoSleep   = contract.NewMethod[sleepArgs, sleepArgs](echoService, "sleep")
)

func newRegistry(t *testing.T, mod func(*registry.Config)) *registry.Registry {
	cfg := &registry.Config{Dirs: []string{adapterDir}}
	if mod != nil {
		mod(cfg)
	}
	r := registry.New(cfg)
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("registry Close: %v", err)
		}
	})
	return r
}

func TestOpenByNameAndTypedClient(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo@~> 1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Name() != "echo" || filepath.Base(h.Path()) != exe("echo_v1.2.0") {
		t.Fatalf("opened %s (%s)", h.Name(), h.Path())
	}
	e, err := newEchoClient(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Echo(ctxT(t), map[string]any{"a": "b", "n": 2})
	if err != nil || got["a"] != "b" || got["n"] != float64(2) {
		t.Fatalf("Echo = %v, %v", got, err)
	}
	s, err := e.Sleep(ctxT(t), 5)
	if err != nil || s.MS != 5 {
		t.Fatalf("Sleep = %+v, %v", s, err)
	}
	// Cancel reaches the adapter: aborted, outcome uncertain (R32).
	ctx, cancel := context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	if _, err := e.Sleep(ctx, 10000); runtime.CodeOf(err) != wire.CodeDeadline || !runtime.IsUncertain(err) {
		t.Fatalf("Sleep past deadline = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if len(r.Opened()) != 0 {
		t.Fatal("closed handle still listed")
	}
}

func TestPrereleaseOnlyWhenAsked(t *testing.T) {
	r := newRegistry(t, nil)
	a, err := r.Lookup(ctxT(t), "echo")
	if err != nil || filepath.Base(a.Path) != exe("echo_v1.2.0") {
		t.Fatalf("Lookup(echo) = %s, %v", a.Path, err)
	}
	pre := newRegistry(t, func(c *registry.Config) { c.Prerelease = true })
	a, err = pre.Lookup(ctxT(t), "echo")
	if err != nil || filepath.Base(a.Path) != exe("echo_v2.0.0-beta.1") {
		t.Fatalf("Lookup(echo) with pre-releases = %s, %v", a.Path, err)
	}
}

func TestResolveErrors(t *testing.T) {
	r := newRegistry(t, nil)
	tests := []struct {
		ref string
		is  error
	}{
		{"./echo_v1.2.0", platform.ErrNotAbsolute},
		{"bin/echo", platform.ErrNotAbsolute},
		{"nosuch", discovery.ErrNotFound},
		{"echo@>= 3", discovery.ErrNoMatchingVersion},
		{"Echo!", discovery.ErrRefName},
		{"echo@~> x", discovery.ErrRefConstraint},
	}
	for _, tt := range tests {
		if _, err := r.Open(ctxT(t), tt.ref, nil); !errors.Is(err, tt.is) {
			t.Errorf("Open(%q) = %v, want %v", tt.ref, err, tt.is)
		}
	}
}

func TestNewClientChecksCatalog(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), filepath.Join(adapterDir, exe("thermometer_v1.0.0")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newEchoClient(h); !errors.Is(err, registry.ErrServiceMissing) {
		t.Fatalf("echo client of the thermometer = %v", err)
	}
	cat := h.Catalog()
	svc := func(version int, method string) *contract.Service {
		s := contract.NewService("example.device", version)
		contract.NewMethod[struct{}, struct{}](s, method)
		return s
	}
	tests := []struct {
		svc *contract.Service
		is  error
	}{
		{svc(1, "read"), nil},
		{svc(2, "read"), registry.ErrVersionMismatch},
		{svc(1, "write"), registry.ErrMethodMissing},
	}
	for _, tt := range tests {
		if err := registry.CheckCatalog(cat, tt.svc); !errors.Is(err, tt.is) {
			t.Errorf("CheckCatalog(%s %v) = %v, want %v", tt.svc.ID(), tt.svc.Methods(), err, tt.is)
		}
	}
	for _, bad := range []*contract.Service{contract.NewService("device", 1), contract.NewService("a.b", 0), nil} {
		if _, err := registry.NewClient(h, bad); !errors.Is(err, contract.ErrInvalid) {
			t.Errorf("NewClient(%v) = %v", bad, err)
		}
	}
}

// bindOne returns a client of a contract of example.echo version 1 with the one method
// name, typed P to R as a test wants it.
func bindOne[P, R any](t *testing.T, h *registry.Handle, name string) (*registry.Client, *contract.Method[P, R]) {
	t.Helper()
	svc := contract.NewService("example.echo", 1)
	m := contract.NewMethod[P, R](svc, name)
	c, err := registry.NewClient(h, svc)
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

// The encoding and decoding around a call, typed (registry.Call) and raw (Handle.Call).
func TestCallEncodingAndDecoding(t *testing.T) {
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Params that do not encode, or not to a JSON object, fail before anything is sent.
	loose, echoAny := bindOne[any, json.RawMessage](t, h, "echo")
	for _, p := range []any{map[string]any{"c": make(chan int)}, struct{ F func() }{func() {}}, []int{1}, 7} {
		_, err = registry.Call(ctxT(t), loose, echoAny, p)
		if !errors.Is(err, registry.ErrEncode) || !runtime.IsNeverStarted(err) || runtime.CodeOf(err) != wire.CodeInvalid {
			t.Fatalf("params %T = %v, want an encode error, invalid, never started", p, err)
		}
	}
	// A result that does not fit the caller's type is a DecodeError; the call succeeded.
	intClient, echoInt := bindOne[map[string]any, struct {
		N int `json:"n"`
	}](t, h, "echo")
	_, err = registry.Call(ctxT(t), intClient, echoInt, map[string]any{"n": 1.5})
	if !errors.Is(err, codec.ErrDecode) || runtime.IsUncertain(err) {
		t.Fatalf("fractional into int = %v", err)
	}
	// Raw JSON passes through unchanged, typed and raw.
	if raw, err := registry.Call(ctxT(t), loose, echoAny, any(json.RawMessage(`{"k":[1,2]}`))); err != nil || string(raw) != `{"k":[1,2]}` {
		t.Fatalf("raw params, typed = %s, %v", raw, err)
	}
	if raw, err := h.Call(ctxT(t), "example.echo.echo", json.RawMessage(`{"k":[1,2]}`)); err != nil || string(raw) != `{"k":[1,2]}` {
		t.Fatalf("raw = %s, %v", raw, err)
	}
	// R41: a method the adapter does not advertise never reaches it.
	if _, err := h.Call(ctxT(t), "example.echo.nope", nil); runtime.CodeOf(err) != wire.CodeUnavailable || !runtime.IsNeverStarted(err) {
		t.Fatalf("unknown method = %v", err)
	}
	// The adapter's error arrives typed with its code.
	failc, fail := bindOne[map[string]string, struct{}](t, h, "fail")
	_, err = registry.Call(ctxT(t), failc, fail, map[string]string{"code": "denied", "message": "no"})
	if runtime.CodeOf(err) != wire.CodeDenied || runtime.IsUncertain(err) {
		t.Fatalf("fail = %v", err)
	}
	if _, err := h.Call(ctxT(t), "example.echo.fail", json.RawMessage(`{"code":"denied","message":"no"}`)); runtime.CodeOf(err) != wire.CodeDenied {
		t.Fatalf("fail, raw = %v", err)
	}
	// Configuration must be a JSON object.
	if _, err := r.Open(ctxT(t), "echo", []int{1}); !errors.Is(err, registry.ErrEncode) {
		t.Fatalf("bad configuration = %v", err)
	}
}

func TestPins(t *testing.T) {
	path := filepath.Join(adapterDir, exe("echo_v1.2.0"))
	sum, err := digest.FileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t, func(c *registry.Config) {
		c.Pins = map[string]string{path: sum, filepath.Join(adapterDir, exe("thermometer_v1.0.0")): strings.Repeat("0", 64)}
	})
	h, err := r.Open(ctxT(t), path, nil)
	if err != nil {
		t.Fatalf("pinned adapter with the right digest: %v", err)
	}
	defer h.Close()
	if _, err := r.Open(ctxT(t), "thermometer", nil); !errors.Is(err, discovery.ErrDigestMismatch) {
		t.Fatalf("pinned adapter with the wrong digest = %v", err)
	}
}

func TestCloseRegistry(t *testing.T) {
	r := registry.New(&registry.Config{Dirs: []string{adapterDir}})
	var pids []int
	for range 3 {
		h, err := r.Open(ctxT(t), "echo", nil)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, h.Status().Pid)
	}
	if n := len(r.Opened()); n != 3 {
		t.Fatalf("opened = %d", n)
	}
	if err := r.Close(ctxT(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if exists(pid) {
			t.Errorf("pid %d still exists after a verified close", pid)
		}
	}
	if _, err := r.Open(ctxT(t), "echo", nil); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Open after Close = %v", err)
	}
	if _, err := r.Discover(ctxT(t)); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Discover after Close = %v", err)
	}
	if err := r.Reservations().CanRelease(adapterDir); err != nil {
		t.Fatalf("directory still reserved: %v", err)
	}
}

// exists reports whether pid names a process: on Linux one /proc still lists (a zombie
// included: a verified close has reaped the adapter), elsewhere one that runs.
func exists(pid int) bool {
	if goruntime.GOOS == "linux" {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err == nil
	}
	return testkit.Running(pid)
}

// exe is the file name discovery takes for an adapter installed as name: NAME_vX.Y.Z,
// with ".exe" on Windows.
func exe(name string) string {
	if goruntime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}
