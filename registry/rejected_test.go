//go:build linux

package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// A file that is there but not taken (here: not executable) is named, with its
// reason, in the error of Open and in the registry's log; a file name given as a
// reference gets the reference it stands for.
func TestOpenExplainsRejectedFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "inventory_v1.0.0")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	r := registry.New(&registry.Config{Dirs: []string{dir},
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &logs})})
	defer r.Close(context.Background())

	_, err := r.Open(ctxT(t), "inventory", nil)
	var nf *discovery.NotFoundError
	if !errors.As(err, &nf) || len(nf.RejectedFor()) != 1 || nf.RejectedFor()[0].Reason != discovery.NotExecutable {
		t.Fatalf("Open = %v, want a not-found error listing the rejected file", err)
	}
	if !strings.Contains(err.Error(), file+" (not executable") {
		t.Errorf("the error does not name the file and why: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "file not taken as an adapter") || !strings.Contains(l, file) || !strings.Contains(l, "not executable") {
		t.Errorf("the registry did not log the rejected file:\n%s", l)
	}

	// A relative path is refused by the library, saying what to do instead.
	if _, err := r.Open(ctxT(t), "./inventory_v1.0.0", nil); !errors.Is(err, platform.ErrNotAbsolute) || !strings.Contains(err.Error(), "filepath.Abs") {
		t.Errorf("Open(relative path) = %v, want ErrNotAbsolute saying how to make it absolute", err)
	}
	// So is a relative directory in Config.Dirs, with the same hint.
	rel := registry.New(&registry.Config{Dirs: []string{"adapters"}})
	defer rel.Close(context.Background())
	if _, err := rel.Open(ctxT(t), "inventory", nil); !errors.Is(err, discovery.ErrNotAbsolute) || !strings.Contains(err.Error(), "filepath.Abs") {
		t.Errorf("Open with a relative Config.Dirs entry = %v, want ErrNotAbsolute saying how to make it absolute", err)
	}

	_, err = r.Open(ctxT(t), "inventory_v1.0.0", nil)
	if !errors.Is(err, discovery.ErrRefName) || !strings.Contains(err.Error(), `did you mean "inventory@1.0.0"?`) {
		t.Errorf("Open(file name) = %v, want a suggestion of inventory@1.0.0", err)
	}
}
