package platform

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

// probeResults starts the test binary with cfg in the probe mode and returns its line
// for each probe ("ok" or "err ...").
func probeResults(t *testing.T, cfg Config, probes ...string) (map[string]string, *Tree) {
	t.Helper()
	tree := startHelper(t, cfg, "probe", probes...)
	tree.Stdin().Close()
	out := map[string]string{}
	sc := bufio.NewScanner(tree.Stdout())
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		out[k] = v
	}
	return out, tree
}

// tcpListener accepts and closes connections until the test ends.
func tcpListener(t *testing.T) (net.Listener, uint16) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l, uint16(l.Addr().(*net.TCPAddr).Port)
}

// The kernel refuses what a sandbox does not grant and allows what it grants; the
// same probes without a sandbox all succeed (the control). Both run in a process
// group only, so that the host's pid is nameable and the signal probe reaches Landlock's
// scope rather than a PID namespace's wall.
func TestSandboxEnforced(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	open, openPort := tcpListener(t)
	closed, _ := tcpListener(t)
	sock := filepath.Join(outside, "s.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sleeper := helperCmd("block")
	sleeperIn, _ := sleeper.StdinPipe()
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeperIn.Close(); _ = sleeper.Wait() }()

	probes := []struct {
		probe     string
		sandboxed string // "ok" or the start of the error
	}{
		{"read:" + secret, "err open " + secret + ": permission denied"},
		{"write:" + outside, "err open " + filepath.Join(outside, "probe") + ": permission denied"},
		{"write:" + allowed, "ok"},
		{"read:" + filepath.Join(allowed, "probe"), "ok"},
		{"tmp:", "ok"},
		{"connect:" + open.Addr().String(), "ok"},
		{"connect:" + closed.Addr().String(), "err dial tcp " + closed.Addr().String() + ": connect: permission denied"},
		{"bind:127.0.0.1:0", "err listen tcp 127.0.0.1:0: bind: permission denied"},
		{"unix:" + sock, "err dial unix " + sock + ": socket: operation not permitted"},
		{"exec:/bin/sh", "err fork/exec /bin/sh: permission denied"},
		{"exec:/bin/true", "ok"},
		{"kill:" + strconv.Itoa(sleeper.Process.Pid), "err operation not permitted"},
	}
	var list []string
	for _, p := range probes {
		list = append(list, p.probe)
	}
	sb := &Sandbox{Write: []string{allowed}, ConnectPorts: []uint16{openPort}, Exec: []string{canonical(t, "/bin/true")}}
	got, tree := probeResults(t, Config{Sandbox: sb, Isolation: IsolationProcessGroup}, list...)
	sup := tree.Supervision()
	if !sup.Mechanism.Has(MechLandlock|MechSeccomp) || !strings.Contains(sup.Sandbox, "landlock v") ||
		!strings.Contains(sup.Sandbox, "tcp connect "+strconv.Itoa(int(openPort))) {
		t.Errorf("supervision %q: want landlock and seccomp, and the port named", sup)
	}
	control, _ := probeResults(t, Config{Isolation: IsolationProcessGroup}, list...)
	for _, p := range probes {
		if g := got[p.probe]; !strings.HasPrefix(g, p.sandboxed) {
			t.Errorf("sandboxed %s: got %q, want %q", p.probe, g, p.sandboxed)
		}
		if c := control[p.probe]; c != "ok" {
			t.Errorf("control %s: got %q, want ok", p.probe, c)
		}
	}
}

// seccompThreads counts the host's threads that run under a seccomp filter and those
// with no_new_privs set.
func seccompThreads(t *testing.T) (filtered, nnp int) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread ended meanwhile
		}
		s := string(b)
		if strings.Contains(s, "\nSeccomp:\t2\n") {
			filtered++
		}
		if strings.Contains(s, "\nNoNewPrivs:\t1\n") {
			nnp++
		}
	}
	return filtered, nnp
}

// A sandbox restricts the adapter only, never a thread of the host (the launcher
// stage restricts itself): every thread of the host keeps its permissions while the
// adapter runs, and after.
func TestSandboxHostThreadsUnrestricted(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := startHelper(t, Config{Sandbox: &Sandbox{}}, "block")
	if f, n := seccompThreads(t); f != 0 || n != 0 {
		t.Errorf("while the adapter runs: %d threads filtered, %d with no_new_privs; want none", f, n)
	}
	// Many goroutines, each on a thread of its own, do what the sandbox refuses.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if _, err := os.ReadFile(outside); err != nil {
				errs <- err
			}
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
			if err != nil {
				errs <- err
				return
			}
			unix.Close(fd)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a host thread was restricted: %v", err)
	}
	shutdown(t, tree)
	var f, n int
	if !testkit.Within(bound, func() bool { f, n = seccompThreads(t); return f == 0 && n == 0 }) {
		t.Fatalf("after the adapter was reaped: %d threads still filtered, %d with no_new_privs", f, n)
	}
}

// A restriction the kernel cannot enforce refuses the start, naming what is missing;
// with BestEffort the adapter starts and the gap is reported.
func TestSandboxUnenforceable(t *testing.T) {
	landlockABIHook = func() (int, error) { return 3, nil }
	defer func() { landlockABIHook = nil }()
	cfg := Config{Path: mustExecutable(), Args: []string{helperArg, "block"}, Sandbox: &Sandbox{ConnectPorts: []uint16{80}}}
	_, err := Start(ctxBound(t), cfg)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no TCP rights") ||
		!strings.Contains(err.Error(), "no IOCTL_DEV right") || !strings.Contains(err.Error(), "no scopes") {
		t.Fatalf("Start: %v; want errors.ErrUnsupported naming the TCP, device ioctl and scope restrictions", err)
	}
	cfg.Sandbox.BestEffort = true
	tree := startHelper(t, cfg, "block")
	sup := tree.Supervision()
	var gaps []string
	for _, d := range sup.Dropped {
		if d.Mechanism == MechLandlock {
			gaps = append(gaps, d.Reason)
		}
	}
	if len(gaps) != 3 || !strings.Contains(sup.Sandbox, "landlock v3: fs;") {
		t.Errorf("supervision %q: want landlock v3 fs in force and three gaps reported", sup)
	}
}

// Interpreters are followed through "#!/usr/bin/env NAME" on the adapter's PATH, and
// the loader of a dynamically linked program is found; what was derived is listed.
func TestSandboxExecChain(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "adapter")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Path: script, Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &Sandbox{}}
	execs, reads, derived, err := execChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeGrants(execs, reads)
	var paths []string
	for _, g := range execs {
		paths = append(paths, g.path)
	}
	joined := strings.Join(paths, " ")
	for _, want := range []string{script, "/usr/bin/env", "/usr/bin/true", "ld-linux"} {
		if !strings.Contains(joined, want) {
			t.Errorf("exec chain %v lacks %s", execs, want)
		}
	}
	if len(reads) != 0 {
		t.Errorf("reads %v; want none (the prefix /usr is not granted)", reads)
	}
	if d := strings.Join(derived, ","); !strings.Contains(d, "exec /usr/bin/env") || !strings.Contains(d, "exec /usr/bin/true") ||
		strings.Contains(d, script) {
		t.Errorf("derived %v; want env and true, not the adapter (which the configuration names)", derived)
	}
	cfg.Env = []string{"PATH=" + dir}
	if _, _, _, err := execChain(cfg); err == nil || !strings.Contains(err.Error(), "true is not on the adapter's PATH") {
		t.Errorf("missing interpreter: %v", err)
	}
}

// FuzzInterpretersOf: whatever an executable's first bytes are, reading its "#!" line or
// ELF header returns absolute interpreters or an error; it never panics.
func FuzzInterpretersOf(f *testing.F) {
	f.Add([]byte("#!/usr/bin/env python3\n"))
	f.Add([]byte("#!/bin/sh -e\n"))
	f.Add([]byte("#!/usr/bin/env -S node --x\n"))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	if b, err := os.ReadFile("/bin/true"); err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "x")
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		next, err := interpretersOf(f, p, "/usr/bin:/bin")
		if err != nil {
			return
		}
		for _, n := range next {
			if len(b) >= 2 && b[0] == '#' && b[1] == '!' && n.path == "" {
				t.Fatalf("empty interpreter from %q", b)
			}
		}
	})
}

// An executable whose PT_INTERP header claims a huge size is refused at once: the size
// is never allocated (the fuzz target found the host stalling on such a file).
func TestSandboxHugeInterpHeader(t *testing.T) {
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil || ef.Class != elf.ELFCLASS64 {
		t.Skip("/bin/true is not a 64-bit ELF file")
	}
	phoff := binary.LittleEndian.Uint64(b[0x20:])
	phentsize := uint64(binary.LittleEndian.Uint16(b[0x36:]))
	for i, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			// p_filesz is at offset 32 of an Elf64_Phdr.
			binary.LittleEndian.PutUint64(b[phoff+uint64(i)*phentsize+32:], 1<<40)
		}
	}
	path := filepath.Join(t.TempDir(), "huge")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := interpretersOf(f, path, "/usr/bin"); err == nil || !strings.Contains(err.Error(), "PT_INTERP of 1099511627776 bytes") {
		t.Fatalf("interpretersOf: %v", err)
	}
}

// A pinned start executes its hashed descriptor through /proc/self/fd: the sandbox lets
// that through (the file is the adapter, which it may execute) and still restricts it.
func TestSandboxPinned(t *testing.T) {
	sum, err := digest.FileAt(mustExecutable())
	if err != nil {
		t.Fatal(err)
	}
	got, tree := probeResults(t, Config{Digest: sum, Sandbox: &Sandbox{}}, "read:/etc/shadow", "tmp:")
	if !tree.Supervision().Mechanism.Has(MechLandlock) || !strings.HasPrefix(got["read:/etc/shadow"], "err") || got["tmp:"] != "ok" {
		t.Errorf("pinned and sandboxed: %v, %s", got, tree.Supervision())
	}
}

// A sandboxed start applies Resources exactly as an unsandboxed one does, the cgroup
// v1 fallback included: the launcher is forked by the same unrestricted spawner thread.
func TestSandboxResources(t *testing.T) {
	res := Resources{MaxProcesses: 64}
	plain := startHelper(t, Config{Resources: res}, "block")
	tree := startHelper(t, Config{Sandbox: &Sandbox{}, Resources: res}, "block")
	limits := func(err error) []string {
		var le *LimitError
		if errors.As(err, &le) {
			return le.Limits
		}
		return nil
	}
	if got, want := limits(tree.LimitErr()), limits(plain.LimitErr()); !slices.Equal(got, want) {
		t.Errorf("sandboxed LimitErr %v; unsandboxed %v", tree.LimitErr(), plain.LimitErr())
	}
}

// Without seccomp filters the start is refused, naming them; with BestEffort the
// adapter runs under Landlock alone and the one gap is reported under seccomp.
func TestSandboxNoSeccomp(t *testing.T) {
	seccompHook = func() error { return errors.New("seccomp filters are not available: invalid argument") }
	defer func() { seccompHook = nil }()
	cfg := Config{Path: mustExecutable(), Args: []string{helperArg, "block"}, Sandbox: &Sandbox{}}
	if _, err := Start(ctxBound(t), cfg); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "seccomp filters are not available") {
		t.Fatalf("Start: %v", err)
	}
	cfg.Sandbox.BestEffort = true
	tree := startHelper(t, cfg, "block")
	sup := tree.Supervision()
	var gaps []Dropped
	for _, d := range sup.Dropped {
		if d.Mechanism&(MechLandlock|MechSeccomp) != 0 {
			gaps = append(gaps, d)
		}
	}
	if len(gaps) != 1 || gaps[0].Mechanism != MechSeccomp || !sup.Mechanism.Has(MechLandlock) || sup.Mechanism.Has(MechSeccomp) ||
		strings.Contains(sup.Sandbox, "seccomp") {
		t.Errorf("supervision %s, gaps %+v", sup, gaps)
	}
}
