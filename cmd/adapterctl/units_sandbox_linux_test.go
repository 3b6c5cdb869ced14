package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireStraceEnv makes TestSystemdUnitSandboxSyscalls fail instead of skipping when
// strace is missing (CI installs it).
const requireStraceEnv = "ADAPTERKIT_REQUIRE_STRACE"

// unitSyscallFilter returns the system calls contrib/systemd's service allows: the
// union of its SystemCallFilter= allow lists, each @group expanded (recursively) by
// systemd-analyze syscall-filter.
func unitSyscallFilter(t *testing.T, analyze string) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "contrib", "systemd", "adapterd.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	groups := map[string]map[string]bool{}
	var expand func(group string) map[string]bool
	expand = func(group string) map[string]bool {
		if s, ok := groups[group]; ok {
			return s
		}
		out, err := exec.Command(analyze, "syscall-filter", "--no-pager", group).Output()
		if err != nil {
			t.Fatalf("systemd-analyze syscall-filter %s: %v", group, err)
		}
		s := map[string]bool{}
		groups[group] = s
		lines := strings.Split(string(out), "\n")
		if len(lines) == 0 || strings.TrimSpace(lines[0]) != group {
			t.Fatalf("systemd-analyze syscall-filter %s said:\n%s", group, out)
		}
		for _, l := range lines[1:] {
			switch l = strings.TrimSpace(l); {
			case l == "" || strings.HasPrefix(l, "#"):
			case strings.HasPrefix(l, "@"):
				for k := range expand(l) {
					s[k] = true
				}
			default:
				s[l] = true
			}
		}
		return s
	}
	allowed := map[string]bool{}
	lines := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "SystemCallFilter=")
		if !ok {
			continue
		}
		lines++
		if strings.HasPrefix(v, "~") {
			t.Fatalf("SystemCallFilter=%s: a deny list, which this test does not apply", v)
		}
		for _, item := range strings.Fields(v) {
			item, _, _ = strings.Cut(item, ":") // name:errno
			if strings.HasPrefix(item, "@") {
				for k := range expand(item) {
					allowed[k] = true
				}
			} else {
				allowed[item] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines == 0 || len(allowed) < 100 {
		t.Fatalf("adapterd.service allows %d system calls in %d SystemCallFilter= lines", len(allowed), lines)
	}
	return allowed
}

// straceCall matches the name of a system call in strace -f output, whether on its
// own line or resumed ("<... NAME resumed>").
var straceCall = regexp.MustCompile(`^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)`)

// TestSystemdUnitSandboxSyscalls: every system call that `adapterctl serve --sandbox`
// and a sandboxed adapter issue, from the daemon's start through an adapter's start
// (Landlock, seccomp, namespaces), a call and a clean stop, is one that
// contrib/systemd's SystemCallFilter= allows, so that under the unit --sandbox starts
// adapters instead of failing on EPERM. The calls are what strace saw of a real run,
// the allowed set what systemd-analyze says the unit's filter holds.
func TestSystemdUnitSandboxSyscalls(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv(requireAnalyzeEnv) != "" {
			t.Fatalf("systemd-analyze not found and $%s is set: %v", requireAnalyzeEnv, err)
		}
		t.Skip("systemd-analyze not installed: the unit's SystemCallFilter= NOT checked (apt-get install systemd)")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv(requireStraceEnv) != "" {
			t.Fatalf("strace not found and $%s is set: %v", requireStraceEnv, err)
		}
		t.Skip("strace not installed: the system calls of serve --sandbox NOT checked against the unit (apt-get install strace)")
	}
	allowed := unitSyscallFilter(t, analyze)

	dir := shortDir(t)
	bin := adapterctlBin(t, dir)
	sock := filepath.Join(dir, "ctl.sock")
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace, bin, "serve", "--sandbox", "--socket", sock, goodDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
		}
	})
	var ready string
	select {
	case ready = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve --sandbox under strace did not get ready in 60 s:\n%s", stderr.String())
	}
	m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(ready)
	if m == nil {
		t.Fatalf("ready line %q\nstderr:\n%s", ready, stderr.String())
	}
	pid, _ := strconv.Atoi(m[1])
	r := runCmd(t, "", "call", "--socket", sock, "echo", "example.echo.echo", `{"n":1}`)
	st := runCmd(t, "", "status", "--socket", sock)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last string
	for l := range lines {
		last = l
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop within 60 s of SIGTERM")
	}
	r.want(t, ExitOK, []string{`{"n":1}`}, nil)
	if !strings.Contains(st.stdout, "landlock|seccomp") {
		t.Fatalf("the adapter did not run sandboxed (Landlock and seccomp):\n%s", st.stdout)
	}
	if !strings.Contains(last, "verified gone") {
		t.Errorf("last line %q", last)
	}

	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := straceCall.FindStringSubmatch(l); m != nil {
			used[m[1]]++
		}
	}
	// The sandbox's own calls must be among them, or nothing was traced.
	for _, want := range []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp", "prctl", "execve"} {
		if used[want] == 0 {
			t.Fatalf("strace saw no %s: the sandboxed start was not traced (%d calls seen)", want, len(used))
		}
	}
	var missing []string
	for name := range used {
		if !allowed[name] {
			missing = append(missing, fmt.Sprintf("%s (%d times)", name, used[name]))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("serve --sandbox issues system calls contrib/systemd/adapterd.service's SystemCallFilter= does not allow:\n  %s",
			strings.Join(missing, "\n  "))
		return
	}
	t.Logf("%d distinct system calls traced, all allowed by the unit's %d", len(used), len(allowed))
}
