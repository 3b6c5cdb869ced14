package e2e

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// One error vocabulary: each concept is defined once (internal/sentinel, or the lowest
// package that owns it) and a package that gives it a name of its own gives that same
// value (docs/errors.md), so errors.Is works across layers.
func TestOneErrorVocabulary(t *testing.T) {
	for _, c := range []struct {
		name      string
		one, same error
	}{
		{"not absolute: discovery", platform.ErrNotAbsolute, discovery.ErrNotAbsolute},
		{"not found: discovery", platform.ErrNotFound, discovery.ErrNotFound},
		{"frame too large: controlplane", proto.ErrFrameTooLarge, controlplane.ErrFrameTooLarge},
	} {
		if c.one != c.same {
			t.Errorf("%s: %q and %q are two definitions of one concept", c.name, c.one, c.same)
		}
	}
	// Wrapped forms match the one sentinel.
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"host violation", &wire.ViolationError{Kind: wire.HostFrame}, wire.ErrHostViolation},
		{"adapter violation", &wire.ViolationError{Kind: wire.Output}, wire.Output},
		{"adapter violation is not the host's", &wire.ViolationError{Kind: wire.Output}, nil},
	} {
		got := errors.Is(c.err, c.want)
		if c.want == nil {
			got = !errors.Is(c.err, wire.ErrHostViolation)
		}
		if !got {
			t.Errorf("%s: %v does not match %v", c.name, c.err, c.want)
		}
	}
	// A process tree closed by the host says so with the same error as a connection.
	tree, err := platform.Start(context.Background(), platform.Config{Path: "/bin/sleep", Args: []string{"60"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = tree.Close()
	if err := tree.Kill(context.Background()); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Kill after Close = %v, want runtime.ErrClosed", err)
	}
}

// A nil context gets the one nil-context error at every exported entry point that
// takes a context: errors.Is(err, runtime.ErrNilContext), never a panic.
func TestNilContextEverywhere(t *testing.T) {
	var nilCtx context.Context
	pr, pw := io.Pipe()
	defer pr.Close()
	defer pw.Close()
	conn := runtime.NewConn(pr, pw, nil)
	defer conn.Close()
	reg := registry.New(nil)
	defer reg.Close(context.Background())
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"runtime.Conn.Initialize", func() error { _, err := conn.Initialize(nilCtx, nil); return err }},
		{"runtime.Conn.Call", func() error { _, err := conn.Call(nilCtx, "a.b.c", nil); return err }},
		{"plugin.Adapter.Serve", func() error { return (&plugin.Adapter{}).Serve(nilCtx, strings.NewReader(""), io.Discard) }},
		{"platform.Start", func() error { _, err := platform.Start(nilCtx, platform.Config{Path: "/bin/true"}); return err }},
		{"platform.Sweep", func() error { _, err := platform.Sweep(nilCtx, nil); return err }},
		{"lifecycle.Open", func() error { _, err := lifecycle.Open(nilCtx, lifecycle.Config{Path: "/bin/true"}); return err }},
		{"lifecycle.Supervise", func() error {
			_, err := lifecycle.Supervise(nilCtx, lifecycle.Config{Path: "/bin/true"}, lifecycle.RestartPolicy{})
			return err
		}},
		{"lifecycle.Reservations.Reverify", func() error { return new(lifecycle.Reservations).Reverify(nilCtx, "/") }},
		{"discovery.Scan", func() error { _, err := discovery.Scan(nilCtx, nil, "/"); return err }},
		{"registry.Discover", func() error { _, err := reg.Discover(nilCtx); return err }},
		{"registry.Lookup", func() error { _, err := reg.Lookup(nilCtx, "x"); return err }},
		{"registry.Open", func() error { _, err := reg.Open(nilCtx, "x", nil); return err }},
		{"registry.Close", func() error { return registry.New(nil).Close(nilCtx) }},
		{"controlplane.Dial", func() error { _, err := controlplane.Dial(nilCtx, "/nonexistent.sock"); return err }},
		{"controlplane.DialTLS", func() error { _, err := controlplane.DialTLS(nilCtx, "127.0.0.1:1", nil); return err }},
		{"controlplane.Serve", func() error { return controlplane.Serve(nilCtx, controlplane.ServerConfig{}) }},
	} {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panics on a nil context: %v", c.name, p)
				}
			}()
			err = c.f()
		}()
		if !errors.Is(err, runtime.ErrNilContext) {
			t.Errorf("%s with a nil context = %v, want runtime.ErrNilContext", c.name, err)
		}
	}
}
