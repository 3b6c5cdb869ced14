package platform

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// canonical is path with every symbolic link resolved, as a sandbox policy must name it
// (/bin is a link on a merged /usr).
func canonical(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withPolicy returns a Sandbox granting path through the field named.
func withPolicy(field, path string) *Sandbox {
	switch field {
	case "Read":
		return &Sandbox{Read: []string{path}}
	case "Write":
		return &Sandbox{Write: []string{path}}
	}
	return &Sandbox{Exec: []string{path}}
}

// startProbe starts the probe helper with cfg and returns its lines, or Start's error.
func startProbe(t *testing.T, cfg Config, probes ...string) (map[string]string, error) {
	t.Helper()
	cfg.Path = cmpOr(cfg.Path, mustExecutable())
	cfg.Args = append([]string{helperArg, "probe"}, probes...)
	cfg.Env = []string{"GORACE=atexit_sleep_ms=0"}
	tree, err := Start(ctxBound(t), cfg)
	if err != nil {
		return nil, err
	}
	defer shutdown(t, tree)
	tree.Stdin().Close()
	out := map[string]string{}
	sc := bufio.NewScanner(tree.Stdout())
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		out[k] = v
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A policy path that goes through a symbolic link — the link itself or a directory
// above the file — is refused, for every kind of grant, with a *SandboxPathError naming
// the canonical path to write instead; that canonical path is accepted.
func TestSandboxSymlinkedPolicyRefused(t *testing.T) {
	dir := canonical(t, t.TempDir())
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "f"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"Read", "Write", "Exec"} {
		for _, tc := range []struct{ name, path, want string }{
			{"link", link, real},
			{"beneath a link", filepath.Join(link, "f"), filepath.Join(real, "f")},
		} {
			t.Run(field+"/"+tc.name, func(t *testing.T) {
				cfg := Config{Sandbox: withPolicy(field, tc.path), Isolation: IsolationProcessGroup}
				_, err := startProbe(t, cfg)
				var pe *SandboxPathError
				if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidConfig) || pe.Field != field || pe.Path != tc.path ||
					pe.Link != link || pe.Canonical != tc.want || !strings.Contains(err.Error(), "write its canonical path "+tc.want) {
					t.Fatalf("Start: %v; want a *SandboxPathError for %s naming %s", err, field, tc.want)
				}
				cfg.Sandbox = withPolicy(field, tc.want)
				got, err := startProbe(t, cfg, "read:"+filepath.Join(real, "f"))
				if err != nil || got["read:"+filepath.Join(real, "f")] != "ok" {
					t.Errorf("the canonical path: %v %v", got, err)
				}
			})
		}
	}
}

// An adapter that may write where another adapter's grant lives replaces the granted
// directory by a symbolic link to what it wants that adapter to read or write: the next
// start of the same Config is refused, never granting the link's target.
func TestSandboxGrantReplacedBySymlink(t *testing.T) {
	defer openat2Missing.Store(false)
	for _, tc := range []struct {
		field          string
		openat2Missing bool // the walk without openat2
	}{{"Read", false}, {"Write", false}, {"Exec", false}, {"Read", true}, {"Write", true}, {"Exec", true}} {
		field := tc.field
		t.Run(fmt.Sprintf("%s/openat2-missing=%v", field, tc.openat2Missing), func(t *testing.T) {
			openat2Missing.Store(tc.openat2Missing)
			base, outside := canonical(t, t.TempDir()), canonical(t, t.TempDir())
			granted := filepath.Join(base, "grant")
			if err := os.Mkdir(granted, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(granted, "mine"), []byte("m"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := Config{Sandbox: withPolicy(field, granted), Isolation: IsolationProcessGroup}
			mine, secret := "read:"+filepath.Join(granted, "mine"), "read:"+filepath.Join(granted, "secret")
			got, err := startProbe(t, cfg, mine)
			if err != nil || got[mine] != "ok" {
				t.Fatalf("first start: %v %v", got, err)
			}
			// The other adapter's move, between the two starts.
			if err := os.Rename(granted, filepath.Join(base, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, granted); err != nil {
				t.Fatal(err)
			}
			got, err = startProbe(t, cfg, secret)
			var pe *SandboxPathError
			if !errors.As(err, &pe) || pe.Canonical != outside {
				t.Fatalf("second start: %v, probe %v; want a *SandboxPathError naming %s", err, got, outside)
			}
		})
	}
}

// The default read grant is the adapter's own file, not its directory: beside it, a
// ".env" file and another adapter stay unreadable and the directory unlistable, whether
// Config.Path names the file or a symbolic link to it (whose directory stays closed too).
func TestSandboxDefaultGrantOwnFile(t *testing.T) {
	dir := canonical(t, t.TempDir())
	pkg, links := filepath.Join(dir, "adapters"), filepath.Join(dir, "links")
	for _, d := range []string{pkg, links} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(pkg, "a_v1.0.0")
	copyFile(t, mustExecutable(), exe, 0o755)
	env, sibling := filepath.Join(pkg, ".env"), filepath.Join(pkg, "b_v1.0.0")
	if err := os.WriteFile(env, []byte("TOKEN=s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sibling, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(links, "a")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	probes := []struct{ probe, want string }{
		{"read:" + exe, "ok"},
		{"read:" + env, "err"},
		{"read:" + sibling, "err"},
		{"list:" + pkg, "err"},
		{"list:" + links, "err"},
		{"tmp:", "ok"},
	}
	var list []string
	for _, p := range probes {
		list = append(list, p.probe)
	}
	for _, path := range []string{exe, link} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			got, err := startProbe(t, Config{Path: path, Sandbox: &Sandbox{}}, list...)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probes {
				if !strings.HasPrefix(got[p.probe], p.want) {
					t.Errorf("%s: %q, want %s", p.probe, got[p.probe], p.want)
				}
			}
		})
	}
	control, err := startProbe(t, Config{Path: exe}, list...)
	if err != nil || control["read:"+env] != "ok" || control["list:"+pkg] != "ok" {
		t.Errorf("control: %v %v; the probe cannot show a refusal", control, err)
	}
}

// The walk refuses a symbolic link anywhere on the way, with openat2 and with the
// openat(O_NOFOLLOW) walk taken where openat2 is missing; resolveTrusted follows only
// links root alone could have changed.
func TestGrantPathWalk(t *testing.T) {
	dir := canonical(t, t.TempDir())
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	flink := filepath.Join(sub, "flink")
	if err := os.Symlink("f", flink); err != nil {
		t.Fatal(err)
	}
	for _, missing := range []bool{false, true} {
		openat2Missing.Store(missing)
		for _, tc := range []struct {
			path, link string // link: the component refused; "" opens
		}{
			{filepath.Join(sub, "f"), ""},
			{sub, ""},
			{"/", ""},
			{link, link},
			{filepath.Join(link, "f"), link},
			{flink, flink},
			{"/proc/self/root/etc", "/proc/self"},
		} {
			fd, _, err := openNoSymlinks(tc.path, nil)
			var sl *symlinkError
			switch {
			case tc.link == "" && err != nil:
				t.Errorf("openat2 missing %v: %s: %v", missing, tc.path, err)
			case tc.link != "" && (!errors.As(err, &sl) || sl.link != tc.link):
				t.Errorf("openat2 missing %v: %s: %v; want %s refused", missing, tc.path, err, tc.link)
			}
			if err == nil {
				unix.Close(fd)
			}
		}
	}
	openat2Missing.Store(false)
	if _, err := resolveTrusted(filepath.Join(link, "f")); err == nil || !strings.Contains(err.Error(), "not owned by root or is writable") {
		t.Errorf("resolveTrusted through a link in a temporary directory: %v", err)
	}
	if got, err := resolveTrusted(filepath.Join(sub, "f")); err != nil || got != filepath.Join(sub, "f") {
		t.Errorf("resolveTrusted without links: %q %v", got, err)
	}
	if want := canonical(t, "/bin/sh"); want != "/bin/sh" {
		if got, err := resolveTrusted("/bin/sh"); err != nil || got != want {
			t.Errorf("resolveTrusted(/bin/sh) = %q, %v; want %s", got, err, want)
		}
	}
}
