//go:build linux

package lifecycle_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
)

// R61, A31, A33: launch and configuration errors are typed and start nothing.
func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name  string
		cfg   lifecycle.Config
		stage lifecycle.Stage
		is    error
	}{
		{"relative path", lifecycle.Config{Path: "bin/adapter"}, lifecycle.StageSpawn, platform.ErrNotAbsolute},
		{"missing", lifecycle.Config{Path: "/nonexistent/adapter"}, lifecycle.StageSpawn, platform.ErrNotFound},
		{"directory", lifecycle.Config{Path: "/tmp"}, lifecycle.StageSpawn, platform.ErrNotRegular},
		{"config not an object", lifecycle.Config{Path: "/bin/true", Configuration: []byte(`[1]`)}, lifecycle.StageConfig, runtime.ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lifecycle.Open(ctxT(t), tt.cfg)
			var oe *lifecycle.OpenError
			if !errors.As(err, &oe) || oe.Stage != tt.stage || !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want stage %s and %v", err, tt.stage, tt.is)
			}
		})
	}
	// "Start nothing", seen from outside: an adapter that leaves a mark as its first
	// act and then stays; a bad configuration must fail Open before it is started.
	// (A good one starts it: the mark is how the test would see a start.)
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	script := filepath.Join(dir, "marks")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n: > "+marker+"\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, conf := range []string{`[1]`, `"x"`, `{`} {
		_, err := lifecycle.Open(ctxT(t), lifecycle.Config{Path: script, Configuration: []byte(conf)})
		if !errors.Is(err, runtime.ErrInvalidParams) {
			t.Fatalf("configuration %s: err = %v", conf, err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("configuration %s: the adapter was started", conf)
		}
		for _, kid := range childrenOf(t, os.Getpid()) {
			if cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(kid) + "/cmdline"); strings.Contains(string(cmd), script) {
				t.Fatalf("configuration %s: the adapter %d runs", conf, kid)
			}
		}
	}
	// The positive control: with a valid configuration the same adapter is started.
	ctx, cancel := context.WithCancel(ctxT(t))
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		_, _ = lifecycle.Open(ctx, lifecycle.Config{Path: script, Configuration: []byte(`{}`)}) // never answers
	}()
	if !testkit.Within(20*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
		t.Error("a valid configuration did not start the adapter either")
	}
	cancel()
	<-opened
}
