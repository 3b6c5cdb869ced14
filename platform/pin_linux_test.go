package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
// bytes are executed, for a native executable and for a #! script alike, and so are
// they when the file is written in place in that window; a wrong or malformed pin
// starts nothing.
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
		// Same file, other contents and size: the sealed copy runs, not the new bytes.
		dir := t.TempDir()
		path := filepath.Join(dir, "adapter")
		writeExe(t, path, script)
		sum, _ := digest.FileAt(path)
		out, err := runPinned(t, path, sum, nil, func(p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = f.Write(swapped)
			_ = f.Close()
		})
		if err != nil || out != "pinned script\n" {
			t.Fatalf("Start after an in-place rewrite: %q, %v; want the hashed bytes run", out, err)
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

// The two scripts of the in-place rewrite tests: the same size, so that neither the
// size nor (reset by the writer) the modification time tells them apart.
var (
	pinnedBash    = []byte("#!/bin/bash\necho pinned AAAA\n")
	rewrittenBash = []byte("#!/bin/bash\necho evil!! BBBB\n")
)

const pinRewriteArg = "adapterkit-pin-rewrite" // argv[1]: run pinRewrite, print the outputs

func init() {
	if len(os.Args) > 2 && os.Args[1] == pinRewriteArg {
		rep, err := pinRewrite(os.Args[2], os.Args[3])
		if err != nil {
			fmt.Println("error", err)
			os.Exit(6)
		}
		b, _ := json.Marshal(rep)
		fmt.Println(string(b))
		os.Exit(0)
	}
}

// rewriteInPlace writes b over path's contents, same size, and puts the modification
// time back as it was (as the file's owner may, with utimensat).
func rewriteInPlace(path string, b []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteAt(b, 0)
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	return os.Chtimes(path, fi.ModTime(), fi.ModTime())
}

// pinRewriteReport is what pinRewrite saw.
type pinRewriteReport struct {
	// Outs is what every start's adapter wrote, "mismatch" for a start refused for
	// its digest, "error: ..." for another failed start under rewrites.
	Outs []string
	// Mechanism is the supervision of the first start.
	Mechanism string
}

// pinRewrite starts the bash script at path pinned to sum, in two ways: first with
// the script rewritten in place between the hash and the exec (pinHook), then 20
// starts while a goroutine keeps rewriting the file in place, back and forth, which
// also hits the moment bash reads the script after the exec.
func pinRewrite(path, sum string) (*pinRewriteReport, error) {
	rep := &pinRewriteReport{}
	run := func(first bool) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tree, err := Start(ctx, Config{Path: path, Digest: sum})
		if errors.Is(err, digest.ErrMismatch) {
			rep.Outs = append(rep.Outs, "mismatch")
			return nil
		}
		if err != nil && !first {
			rep.Outs = append(rep.Outs, "error: "+err.Error())
			return nil
		}
		if err != nil {
			return err
		}
		if first {
			rep.Mechanism = tree.Supervision().Mechanism.String()
		}
		out, rerr := io.ReadAll(tree.Stdout())
		_ = tree.Kill(ctx)
		verr := tree.Verify(ctx)
		cerr := tree.Close()
		rep.Outs = append(rep.Outs, string(out))
		return errors.Join(rerr, verr, cerr)
	}
	var hookErr error
	pinHook = func(p string) { hookErr = rewriteInPlace(p, rewrittenBash) }
	err := run(true)
	pinHook = nil
	if err := errors.Join(err, hookErr, rewriteInPlace(path, pinnedBash)); err != nil {
		return nil, err
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- rewriteInPlace(path, pinnedBash)
				return
			default:
			}
			b := pinnedBash
			if i%2 == 0 {
				b = rewrittenBash
			}
			if err := rewriteInPlace(path, b); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 20 {
		if err = run(false); err != nil {
			break
		}
	}
	close(stop)
	return rep, errors.Join(err, <-done)
}

// checkPinRewrite fails the test if any start ran other bytes than the pinned ones.
func checkPinRewrite(t *testing.T, rep *pinRewriteReport) {
	t.Helper()
	outs := rep.Outs
	t.Logf("supervision: %s", rep.Mechanism)
	if len(outs) != 21 {
		t.Fatalf("%d starts reported, want 21: %q", len(outs), outs)
	}
	if outs[0] != "pinned AAAA\n" {
		t.Errorf("rewritten between hash and exec: the adapter wrote %q, want the pinned bytes' output", outs[0])
	}
	ran := 0
	for _, o := range outs[1:] {
		switch o {
		case "pinned AAAA\n":
			ran++
		case "mismatch": // the hash saw the other bytes: refused, fine
		default:
			if strings.HasPrefix(o, "error: ") {
				t.Logf("a start under rewrites failed (not a run of other bytes): %s", o)
				continue
			}
			t.Errorf("a start under rewrites wrote %q: bytes that were never hashed ran", o)
		}
	}
	t.Logf("under rewrites: %d of 20 starts ran the pinned bytes, the others were refused", ran)
}

// A pinned bash script rewritten in place (the same size, its modification time put
// back) while it starts never runs the new bytes: the start executes a sealed copy.
// As root, in this process.
func TestPinnedScriptRewrittenInPlace(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no /bin/bash")
	}
	path := filepath.Join(t.TempDir(), "adapter")
	writeExe(t, path, pinnedBash)
	sum, err := digest.FileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pinRewrite(path, sum)
	if err != nil {
		t.Fatal(err)
	}
	checkPinRewrite(t, rep)
}

// The same as nobody (setpriv), whose starts take the user-namespace path: the host
// is a copy of the test binary in a directory nobody may read, and the script is
// nobody's own, as an unprivileged operator's would be.
func TestPinnedScriptRewrittenInPlaceAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a host as nobody (an unprivileged run of this package runs the test above as its user)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no /bin/bash")
	}
	dir, exe := othersCopy(t)
	path := filepath.Join(dir, "adapter")
	writeExe(t, path, pinnedBash)
	if err := os.Chown(path, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	sum, err := digest.FileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", exe, pinRewriteArg, path, sum)
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0", "TMPDIR=" + dir}
	cmd.Dir = dir
	rep := nobodyReport[pinRewriteReport](t, cmd)
	checkPinRewrite(t, &rep)
}

// BenchmarkSealedCopy measures what a pinned start adds for its sealed copy: "miss"
// is the first start of a digest (copy 4 MiB into a memfd, seal, hash the copy),
// "hit" every later one (a descriptor of the cached copy).
func BenchmarkSealedCopy(b *testing.B) {
	path := filepath.Join(b.TempDir(), "adapter")
	content := make([]byte, 4<<20)
	for i := range content {
		content[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, content, 0o755); err != nil {
		b.Fatal(err)
	}
	sum, err := digest.FileAt(path)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	forget := func() {
		sealedCache.mu.Lock()
		if m, ok := sealedCache.m[sum]; ok {
			_ = m.Close()
			delete(sealedCache.m, sum)
		}
		sealedCache.order = nil
		sealedCache.mu.Unlock()
	}
	defer forget()
	b.Run("miss", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			forget()
			m, err := sealedCopy(ctx, f, sum)
			if err != nil {
				b.Fatal(err)
			}
			_ = m.Close()
		}
	})
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			m, err := sealedCopy(ctx, f, sum)
			if err != nil {
				b.Fatal(err)
			}
			_ = m.Close()
		}
	})
}

// BenchmarkStartPinned compares a whole start of /bin/true with and without a pin
// (the pinned one hashes the file each time and runs the cached sealed copy).
func BenchmarkStartPinned(b *testing.B) {
	sum, err := digest.FileAt("/bin/true")
	if err != nil {
		b.Skip("no /bin/true")
	}
	for _, bc := range []struct {
		name, digest string
	}{{"unpinned", ""}, {"pinned", sum}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				tree, err := Start(ctx, Config{Path: "/bin/true", Digest: bc.digest})
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, tree.Stdout())
				_ = tree.Kill(ctx)
				if err := tree.Verify(ctx); err != nil {
					b.Fatal(err)
				}
				_ = tree.Close()
			}
		})
	}
}
