package platform

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/digest"
)

// runPinned starts path pinned to digest, with hook run between hash and exec, and
// returns what the adapter wrote to stdout (it exits by itself).
func runPinned(t *testing.T, path, digest string, args []string, hook func(string)) (string, error) {
	t.Helper()
	pinHook = hook
	t.Cleanup(func() { pinHook = nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tree, err := Start(ctx, Config{Path: path, Args: args, Digest: digest})
	pinHook = nil
	if err != nil {
		return "", err
	}
	out, rerr := io.ReadAll(tree.Stdout())
	if err := tree.Kill(ctx); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Logf("kill: %v", err)
	}
	if err := tree.Verify(ctx); err != nil {
		t.Errorf("verify: %v", err)
	}
	if err := tree.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if rerr != nil {
		t.Fatalf("reading stdout: %v", rerr)
	}
	return string(out), nil
}

func writeExe(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A pin is bound to the bytes executed. A file renamed over the pinned path
// between the hash and the exec (the window widened by pinHook) never runs: the hashed
// descriptor is executed, for a native executable and for a #! script alike. A file
// written in place in that window is caught after the exec and the tree is killed
// before Start returns it; a wrong or malformed pin starts nothing.
func TestPinBoundToExecutedBytes(t *testing.T) {
	echo, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Skip("no /bin/echo to copy:", err)
	}
	swapped := []byte("#!/bin/sh\necho swapped bytes ran\n")
	script := []byte("#!/bin/sh\necho pinned script\n")
	for _, c := range []struct {
		name    string
		content []byte
		args    []string
		want    string
	}{
		{"native", echo, []string{"pinned binary"}, "pinned binary\n"},
		{"script", script, nil, "pinned script\n"},
	} {
		t.Run(c.name+"/renamed over", func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "adapter")
			writeExe(t, path, c.content)
			sum, err := digest.FileAt(path)
			if err != nil {
				t.Fatal(err)
			}
			swapped := false
			out, err := runPinned(t, path, sum, c.args, func(p string) {
				other := filepath.Join(dir, "other")
				writeExe(t, other, []byte("#!/bin/sh\necho swapped bytes ran\n"))
				if err := os.Rename(other, p); err != nil {
					t.Error(err)
				}
				swapped = true
			})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if !swapped || out != c.want {
				t.Fatalf("swapped %v; the adapter wrote %q, want %q (the hashed bytes)", swapped, out, c.want)
			}
		})
	}

	t.Run("written in place", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "adapter")
		writeExe(t, path, script)
		sum, _ := digest.FileAt(path)
		_, err := runPinned(t, path, sum, nil, func(p string) {
			// Same file, other contents (and size): an in-place rewrite.
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = f.Write(swapped)
			_ = f.Close()
		})
		var dm *digest.MismatchError
		var le *LaunchError
		if !errors.As(err, &le) || !errors.As(err, &dm) || !errors.Is(err, errChangedWhileStarting) || dm.Want != sum {
			t.Fatalf("Start after an in-place rewrite = %v, want a *LaunchError with a *digest.MismatchError", err)
		}
	})

	t.Run("wrong pin", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "adapter")
		writeExe(t, path, script)
		ran := false
		_, err := runPinned(t, path, strings.Repeat("ab", 32), nil, func(string) { ran = true })
		var dm *digest.MismatchError
		if !errors.As(err, &dm) || !errors.Is(err, digest.ErrMismatch) || ran {
			t.Fatalf("Start with a wrong pin = %v (reached exec: %v)", err, ran)
		}
	})

	t.Run("malformed pin", func(t *testing.T) {
		_, err := runPinned(t, "/bin/echo", "xyz", nil, nil)
		var ie *digest.InvalidError
		if !errors.As(err, &ie) || !errors.Is(err, digest.ErrInvalid) {
			t.Fatalf("Start with a malformed pin = %v", err)
		}
	})
}
