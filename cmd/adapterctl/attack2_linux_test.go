package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/platform"
)

// The attacks on what a contained adapter shares with its neighbours and its host's
// user, and on the cleanup proof of an uncontained one, through the real adapterctl
// binary run as the four hosts of realHosts. The adapter is the prober of
// testdata/badadapter: it tries what its params name and says how each went.

// prober copies the prober adapter into w's adapters directory, owned by the host's
// user, and returns its path.
func (w *realWork) prober(t *testing.T) string {
	t.Helper()
	p := filepath.Join(w.adapters, "prober_v1.0.0")
	copyExec(t, bad("garbage_v1.0.0"), p)
	w.chownAll(t, p)
	return p
}

// probe runs adapterctl call with args (the adapter, and what comes before it) and
// the prober's params, checks the exit status, and returns the prober's outcomes.
func (w *realWork) probe(t *testing.T, code int, args []string, params string) map[string]string {
	t.Helper()
	r := w.run(t, append(append([]string{"call"}, args...), "bad.adapter.echo", params)...)
	r.want(t, code, nil, nil)
	var out map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("call %v as %s: result %q: %v\n%s", args, w.host.name, r.stdout, err, r.stderr)
	}
	return out
}

// callCode is the exit status of a call that starts an adapter in h, in the sandbox
// or not: in the process-group fallback its end is proven only by the reaper of a
// sandboxed adapter, where Landlock's signal scope protects it; otherwise never (4).
func callCode(h realHost, sandboxed bool) int {
	if h.pidns() || (sandboxed && landlockSignalScope()) {
		return ExitOK
	}
	return ExitUnverified
}

// TestRealSandboxNeighbours: a contained adapter started from a discovery directory,
// by call --sandbox and by a serve --policy daemon, reads its own file but neither the
// other adapters beside it nor a .env file there, and cannot list the directory. The
// same adapter uncontained reads and lists them all: the probe can tell.
func TestRealSandboxNeighbours(t *testing.T) {
	bin := realBinary(t)
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			w := h.work(t, bin)
			own := w.prober(t)
			env := writeFile(t, w.adapters, ".env", "TOKEN=secret\n", 0o600)
			other := writeFile(t, w.adapters, "b_v1.0.0", "#!/bin/sh\nexit 0\n", 0o755)
			policy := writeFile(t, w.dir, "policy", "adapter prober\n", 0o644)
			w.chownAll(t, w.dir)
			echo := filepath.Join(w.adapters, "echo_v1.2.0")
			params := fmt.Sprintf(`{"read":[%q,%q,%q,%q],"list":[%q]}`, own, env, other, echo, w.adapters)
			closed := []string{"read:" + env, "read:" + other, "read:" + echo, "list:" + w.adapters}
			check := func(t *testing.T, got map[string]string) {
				t.Helper()
				if got["read:"+own] != "ok" {
					t.Errorf("reading its own file: %q", got["read:"+own])
				}
				for _, k := range closed {
					if !strings.HasPrefix(got[k], "err ") || !strings.Contains(got[k], "permission denied") {
						t.Errorf("%s: %q, want permission denied", k, got[k])
					}
				}
			}

			control := w.probe(t, callCode(h, false), []string{own}, params)
			for _, k := range append(closed, "read:"+own) {
				if control[k] != "ok" {
					t.Fatalf("uncontained, %s: %q: the probe cannot show a refusal", k, control[k])
				}
			}
			t.Run("call", func(t *testing.T) {
				check(t, w.probe(t, callCode(h, true), []string{"--sandbox", own}, params))
			})
			t.Run("serve", func(t *testing.T) {
				d := w.serve(t, "--policy", policy, w.adapters)
				check(t, w.probe(t, ExitOK, []string{"--socket", d.sock, "prober"}, params))
				if _, err := d.stop(t); err != nil && (h.pidns() || d.cmd.ProcessState.ExitCode() != ExitUnverified) {
					t.Fatalf("serve: %v\n%s", err, d.stderr.String())
				}
			})
		})
	}
}

// TestRealSandboxInotify: call --sandbox refuses the adapter inotify_init1 (EPERM), whose
// instances count against the quota of the user it shares with its host, unless
// --allow-inotify grants it; uncontained it may.
func TestRealSandboxInotify(t *testing.T) {
	bin := realBinary(t)
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			w := h.work(t, bin)
			p := w.prober(t)
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"--sandbox", p}, "err operation not permitted"},
				{[]string{"--sandbox", "--allow-inotify", p}, "ok"},
				{[]string{p}, "ok"},
			} {
				if got := w.probe(t, callCode(h, c.args[0] == "--sandbox"), c.args, `{"inotify":true}`)["inotify"]; got != c.want {
					t.Errorf("call %v: inotify %q, want %q", c.args, got, c.want)
				}
			}
		})
	}
}

// TestRealSandboxProcessLimit: an adapter of call --sandbox that starts processes until
// refused stops below platform.DefaultSandboxMaxProcesses with EAGAIN (bounded at 1200
// should nothing stop it), and call still ends it and answers. The limit applies where
// SECURITY.md says: a pids cgroup (root, with or without user namespaces) or RLIMIT_NPROC
// in the adapter's own user namespace (nobody); where neither exists (nobody without
// user namespaces: the process-group fallback) inspect says it was not applied, and the
// test stops there.
func TestRealSandboxProcessLimit(t *testing.T) {
	bin := realBinary(t)
	sleep, err := filepath.EvalSymlinks("/bin/sleep") // the canonical path a grant must name
	if err != nil {
		t.Skip("no /bin/sleep")
	}
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			w := h.work(t, bin)
			p := w.prober(t)
			contain := []string{"--sandbox", "--allow-exec", sleep}
			r := w.run(t, append(append([]string{"inspect", "--json"}, contain...), p)...)
			var out inspectOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("inspect: %v\n%s%s", err, r.stdout, r.stderr)
			}
			limit := fmt.Sprintf("tasks %d (default)", platform.DefaultSandboxMaxProcesses)
			if h.uid != 0 && h.noUserns {
				if !strings.Contains(out.Sandbox, limit+" not applied") {
					t.Fatalf("inspect: sandbox %q, want %q: nothing applies it here", out.Sandbox, limit+" not applied")
				}
				t.Skipf("no pids cgroup or user namespace applies the limit here (SECURITY.md, Limits): %s", out.Sandbox)
			}
			if !strings.Contains(out.Sandbox, limit+" by ") {
				t.Fatalf("inspect: sandbox %q does not say %q", out.Sandbox, limit+" by ...")
			}
			got := w.probe(t, callCode(h, len(contain) > 0), append(contain, p), fmt.Sprintf(`{"bomb":["1200",%q,"3600"]}`, sleep))["bomb"]
			var n int
			var eagain bool
			if _, err := fmt.Sscanf(got, "started %d %t", &n, &eagain); err != nil {
				t.Fatalf("the adapter said %q", got)
			}
			t.Logf("%s; %s", got, out.Sandbox)
			if max := platform.DefaultSandboxMaxProcesses; !eagain || n >= max || n < max/2 {
				t.Errorf("the adapter started %d processes (stopped by EAGAIN: %v), want fewer than %d, stopped by EAGAIN (%s)", n, eagain, max, out.Sandbox)
			}
		})
	}
}

// TestRealCgroupEscapeUnverified: adapterctl call --isolation no-pid-namespace puts the
// adapter in a cgroup without a PID namespace. Uncontained, the adapter moves a setsid
// grandchild into its cgroup's parent (the host's own cgroup, delegated to the host's
// user: every host here runs in one), where the cgroup's "populated 0" no longer sees
// it: call must not claim the end verified, but exit with status 4 naming the
// ancestor's cgroup.procs the adapter's user may write; the grandchild does outlive
// call. With --sandbox the move is refused, the grandchild ends with the cgroup, and
// the end is proven (exit status 0).
func TestRealCgroupEscapeUnverified(t *testing.T) {
	if _, _, err := cgroupfs.Mount(); errors.Is(err, cgroupfs.ErrNoCgroup2) {
		t.Skip("no cgroup v2 file system")
	}
	bin := realBinary(t)
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			w := h.work(t, bin)
			p := w.prober(t)
			cg := w.delegateCgroup(t)
			procs := filepath.Join(cg, "cgroup.procs")
			for _, contain := range [][]string{nil, {"--sandbox"}} {
				t.Run(fmt.Sprintf("sandbox=%v", contain != nil), func(t *testing.T) {
					token := fmt.Sprintf("escape-%s-%d", h.name, time.Now().UnixNano())
					killTokenProcs(t, token)
					args := append(append([]string{"call", "--isolation", "no-pid-namespace"}, contain...), p,
						"bad.adapter.echo", fmt.Sprintf(`{"escape":[%q,%q]}`, token, procs))
					r := w.run(t, args...)
					var got map[string]string
					if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
						t.Fatalf("result %q: %v\n%s", r.stdout, err, r.stderr)
					}
					daemon, err := strconv.Atoi(got["daemon"])
					if err != nil {
						t.Fatalf("no daemon started: %v\n%s", got, r.stderr)
					}
					if contain != nil {
						if !strings.HasPrefix(got["escape"], "err ") {
							t.Fatalf("the sandboxed adapter moved its daemon out (%v)", got)
						}
						r.want(t, ExitOK, nil, nil)
						if pids := tokenProcs(t, token); len(pids) > 0 {
							t.Fatalf("the daemon %v outlived call, which said %q", pids, r.stderr)
						}
						return
					}
					if now, err := testkit.CgroupOf(daemon); got["escape"] != "ok" || err != nil || now != cg {
						t.Fatalf("the adapter did not move its daemon out (%v; daemon %d in cgroup %q, %v): the test proves nothing\n%s",
							got, daemon, now, err, r.stderr)
					}
					t.Logf("call said: %s", strings.TrimSpace(r.stderr))
					r.want(t, ExitUnverified, nil, []string{procs + ", an ancestor of its cgroup: a process it moved there cannot be seen"})
					if pids := tokenProcs(t, token); len(pids) != 1 || pids[0] != daemon {
						t.Fatalf("daemons left %v, want %d: the escape was expected to outlive call", pids, daemon)
					}
				})
			}
		})
	}
}

// delegateCgroup makes a cgroup v2 of the test's own for w's adapterctl to start in,
// owned by the host's user as systemd's Delegate=yes hands one over, so the host's
// adapter cgroups are made beneath it; the test's cleanup kills what is left in it and
// removes it. It returns the cgroup's directory.
func (w *realWork) delegateCgroup(t *testing.T) string {
	t.Helper()
	dir := testkit.PrivateCgroup(t)
	if dir == "" {
		t.Skip("needs root to make a cgroup")
	}
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(dir, f), w.host.uid, w.host.uid); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.cgroup = os.NewFile(uintptr(fd), dir)
	t.Cleanup(func() { w.cgroup.Close() })
	return dir
}
