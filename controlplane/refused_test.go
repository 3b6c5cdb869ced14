//go:build linux

package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/registry"
)

// serveUntil runs Serve with cfg until the returned stop is called (or the test
// ends); stop returns Serve's result.
func serveUntil(t *testing.T, cfg ServerConfig) (sock string, stop func() error) {
	t.Helper()
	if cfg.Socket == "" {
		cfg.Socket = socketPath(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	cfg.OnReady = func() { close(ready) }
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Serve: %v", err)
	}
	var result error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Serve did not return within 30 s of its context ending")
			}
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return cfg.Socket, stop
}

// wantRefused checks that err is a transport_error whose details say the file was
// refused.
func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	e := wantCode(t, err, CodeTransportError)
	if d, ok := e.CallDetails(); !ok || d.Stage != stageRefused || !strings.Contains(e.Message, "refused at") {
		t.Fatalf("%s: %v (details %s), want a refusal", what, e, e.Details)
	}
}

// A file an upgrade refused (a pin) is started neither by Send by version or path
// nor by Capabilities; Status lists it with the version serving. After a restart of
// the daemon with the same state directory the record holds: the old version serves,
// Status says why; Upgrade with retry tries the file again; a daemon without the pin
// serves the new version.
func TestRefusedFileThroughDaemon(t *testing.T) {
	dir := adapterDir(t)
	installVersion(t, dir, "1.1.0")
	state := filepath.Join(t.TempDir(), "state")
	p15 := filepath.Join(dir, "upg_v1.5.0")
	plain, err := digest.FileAt(filepath.Join(dir, "upg_v1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	// The pin allows the serving 1.1.0 (a pin guards every start, the first one
	// included), not 1.5.0, which has bytes of its own.
	cfg := ServerConfig{Dirs: []string{dir}, StateDir: state, WatchInterval: time.Hour,
		Upgrade: &registry.Upgrade{Settle: 20 * time.Millisecond, Allowed: map[string][]string{"upg": {plain}}}}

	sock, stop := serveUntil(t, cfg)
	c := dial(t, sock)
	if v := sendVersion(t, c); v.Version != "1.1.0" {
		t.Fatalf("first: %+v", v)
	}
	installVersion(t, dir, "1.5.0")
	af, err := os.OpenFile(p15, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = af.WriteString("unpinned")
		err = errors.Join(err, af.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Upgrade(testCtx(t), "upg")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 || r.Adapters[0].Version != "1.1.0" || !strings.Contains(r.Adapters[0].UpgradeError, "SHA-256") {
		t.Fatalf("Upgrade: %+v", r.Adapters)
	}
	for _, ref := range []string{"upg@1.5.0", p15} {
		_, err := c.Send(testCtx(t), SendParams{Adapter: ref, Method: "example.echo.version"})
		wantRefused(t, "Send "+ref, err)
	}
	caps, err := c.Capabilities(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range caps.Adapters {
		switch a.Version {
		case "1.5.0":
			if a.Error == nil || a.Services != nil {
				t.Fatalf("Capabilities started the refused file: %+v", a)
			}
			wantRefused(t, "Capabilities", a.Error)
		case "1.1.0":
			if a.Error != nil {
				t.Fatalf("Capabilities 1.1.0: %v", a.Error)
			}
		}
	}
	if v := sendVersion(t, c); v.Version != "1.1.0" {
		t.Fatalf("after the refusal: %+v", v)
	}
	st, err := c.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Refused) != 1 || st.Refused[0].Path != p15 || st.Refused[0].Version != "1.5.0" || st.Refused[0].Serving != "1.1.0" || !st.Refused[0].Pin {
		t.Fatalf("Status.Refused = %+v", st.Refused)
	}
	first := st.Refused[0].At
	_ = c.Close()
	if err := stop(); err != nil {
		t.Fatalf("first daemon: %v", err)
	}
	fi, err := os.Stat(filepath.Join(state, refusedFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, %v", fi, err)
	}

	// The daemon restarted: before any call, Status says what is refused and what
	// serves; a call by name gets the version that served before.
	sock, stop = serveUntil(t, cfg)
	c = dial(t, sock)
	if st, err = c.Status(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if len(st.Refused) != 1 || st.Refused[0].Path != p15 || st.Refused[0].Serving != "1.1.0" || !st.Refused[0].At.Equal(first) {
		t.Fatalf("after a restart, Status.Refused = %+v", st.Refused)
	}
	if v := sendVersion(t, c); v.Version != "1.1.0" {
		t.Fatalf("after a restart: %+v", v)
	}
	_, err = c.Send(testCtx(t), SendParams{Adapter: p15, Method: "example.echo.version"})
	wantRefused(t, "after a restart, Send by path", err)

	// Retry: tried again (refused again by the pin, at a new time).
	if _, err := c.RetryUpgrade(testCtx(t), ""); err == nil {
		t.Fatal("retry without a name accepted")
	} else {
		wantCode(t, err, CodeInvalidParams)
	}
	if r, err = c.RetryUpgrade(testCtx(t), "upg"); err != nil {
		t.Fatal(err)
	}
	if st, err = c.Status(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if len(r.Adapters) != 1 || r.Adapters[0].UpgradeError == "" || len(st.Refused) != 1 || !st.Refused[0].At.After(first) {
		t.Fatalf("after retry: %+v, refused %+v", r.Adapters, st.Refused)
	}
	_ = c.Close()
	if err := stop(); err != nil {
		t.Fatalf("second daemon: %v", err)
	}

	// The pin removed: the refusal it made no longer holds.
	cfg.Upgrade = &registry.Upgrade{Settle: 20 * time.Millisecond}
	sock, _ = serveUntil(t, cfg)
	c = dial(t, sock)
	if v := sendVersion(t, c); v.Version != "1.5.0" {
		t.Fatalf("without the pin: %+v", v)
	}
	if st, err = c.Status(testCtx(t)); err != nil || len(st.Refused) != 0 {
		t.Fatalf("without the pin, Status.Refused = %+v, %v", st, err)
	}
}

// A state directory or file the daemon cannot trust keeps it from starting with
// ErrState: another owner, writable by group or others, a symbolic link, not a
// regular file, corrupt or of another format. A missing one is an empty record.
func TestStateRefused(t *testing.T) {
	good := `{"version":1,"refused":[{"name":"upg","version":"1.5.0","path":"/x/upg_v1.5.0","size":1,"mod_time":"2026-01-01T00:00:00Z","sha256":"` +
		strings.Repeat("ab", 32) + `","at":"2026-01-01T00:00:00Z","reason":"r"}]}`
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // "" : loads
	}{
		{"missing dir", func(t *testing.T, dir string) { _ = os.Remove(dir) }, ""},
		{"missing file", func(t *testing.T, dir string) {}, ""},
		{"good", func(t *testing.T, dir string) { write(t, dir, good, 0o600) }, ""},
		{"group-writable file", func(t *testing.T, dir string) { write(t, dir, good, 0o620) }, "writable by group or others"},
		{"world-writable file", func(t *testing.T, dir string) { write(t, dir, good, 0o602) }, "writable by group or others"},
		{"group-writable dir", func(t *testing.T, dir string) { chmod(t, dir, 0o770) }, "writable by group or others"},
		{"other owner", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the file away")
			}
			write(t, dir, good, 0o600)
			if err := os.Chown(filepath.Join(dir, refusedFile), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "owned by uid 65534"},
		{"symbolic link", func(t *testing.T, dir string) {
			other := filepath.Join(t.TempDir(), "f")
			write(t, filepath.Dir(other), good, 0o600)
			if err := os.Symlink(filepath.Join(filepath.Dir(other), refusedFile), filepath.Join(dir, refusedFile)); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, refusedFile), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"corrupt", func(t *testing.T, dir string) { write(t, dir, `{"version":1,"refused":[`, 0o600) }, "corrupt"},
		{"unknown field", func(t *testing.T, dir string) { write(t, dir, `{"version":1,"refused":[],"x":1}`, 0o600) }, "corrupt"},
		{"trailing data", func(t *testing.T, dir string) { write(t, dir, `{"version":1,"refused":[]} {}`, 0o600) }, "corrupt"},
		{"other version", func(t *testing.T, dir string) { write(t, dir, `{"version":2,"refused":[]}`, 0o600) }, "format version 2"},
		{"relative path", func(t *testing.T, dir string) {
			write(t, dir, strings.Replace(good, "/x/upg_v1.5.0", "x/upg_v1.5.0", 1), 0o600)
		}, "not a clean absolute path"},
		{"bad digest", func(t *testing.T, dir string) {
			write(t, dir, strings.Replace(good, strings.Repeat("ab", 32), strings.Repeat("AB", 32), 1), 0o600)
		}, "lower-case hex"},
		{"bad name", func(t *testing.T, dir string) { write(t, dir, strings.Replace(good, `"upg"`, `"Upg"`, 1), 0o600) }, "not an adapter name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			list, err := loadRefused(dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("loadRefused: %v", err)
				}
				if tc.name == "good" && (len(list) != 1 || list[0].Name != "upg") {
					t.Fatalf("loaded %+v", list)
				}
				return
			}
			if !errors.Is(err, ErrState) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("loadRefused = %v, want ErrState saying %q", err, tc.want)
			}
			// Serve refuses to start on it.
			serr := Serve(context.Background(), ServerConfig{Socket: socketPath(t), Dirs: []string{t.TempDir()}, StateDir: dir})
			if !errors.Is(serr, ErrState) {
				t.Fatalf("Serve = %v, want ErrState", serr)
			}
		})
	}
}

// The record is written atomically, owner-only, into a directory created
// owner-only, and read back the same.
func TestStateRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	in := []registry.Refusal{{Name: "upg", Version: "1.5.0", Path: "/d/upg_v1.5.0", Size: 42, ModTime: at, SHA256: strings.Repeat("0f", 32), At: at, Reason: "why", Pin: true}}
	if err := saveRefused(dir, in); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, refusedFile): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v; want mode %04o", p, fi, err, want)
		}
	}
	out, err := loadRefused(dir)
	if err != nil || len(out) != 1 || out[0] != in[0] {
		t.Fatalf("read back %+v, %v; want %+v", out, err, in)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left in the directory: %v", ents)
	}
}

func write(t *testing.T, dir, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, refusedFile)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	chmod(t, p, mode)
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
