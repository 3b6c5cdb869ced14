package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/examples/console/consoleapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/wire"
)

// buildConsole builds this adapter into a fresh directory under the discovery naming
// convention and returns its path.
func buildConsole(t *testing.T) string {
	t.Helper()
	return filepath.Join(testkit.BuildT(t, testkit.Console), testkit.Console.Name)
}

// The adapter as a host sees it: opened by the registry, its output read as a polled
// stream (registry.Stream) until eof, the session closed with the stream.
func TestAdapterStream(t *testing.T) {
	path := buildConsole(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	reg := registry.New(&registry.Config{Env: []string{"GORACE=" + raceEnv}})
	defer func() {
		if err := reg.Close(ctx); err != nil {
			t.Errorf("registry close: %v", err) // R63
		}
	}()
	h, err := reg.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := h.Catalog().Service(consoleapi.Service.ID())
	if !ok || s.Version != 1 || len(s.Methods) != 3 {
		t.Fatalf("catalog: %+v", h.Catalog())
	}
	c, err := registry.NewClient(h, consoleapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	started, err := registry.Call(ctx, c, consoleapi.Start, helper(t, "print", "over the wire"))
	if err != nil {
		t.Fatal(err)
	}
	st := registry.NewStream(ctx, c, consoleapi.Read, func(int, time.Duration) consoleapi.ReadParams {
		return consoleapi.ReadParams{Session: started.Session, MaxBytes: 4, WaitMS: 1000}
	})
	got, err := io.ReadAll(st)
	if err != nil {
		t.Fatal(err)
	}
	if want := "over the wireerr:over the wire"; string(got) != want {
		t.Fatalf("stream %q, want %q", got, want)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("stream close: %v", err)
	}
	if _, err := registry.Call(ctx, c, consoleapi.Close, consoleapi.SessionParams(started)); err != nil {
		t.Fatalf("close: %v", err)
	}
	// The close freed the session.
	_, err = registry.Call(ctx, c, consoleapi.Read, readParams{Session: started.Session, MaxBytes: 1})
	if code, _ := codeOf(err); code != wire.CodeInvalid {
		t.Fatalf("read after close: %v, want invalid", err)
	}
}
