package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
	"github.com/adapterkit/adapterkit/internal/testkit"
)

func init() {
	// escape: an adapter that starts a setsid grandchild ("daemon"), writes its pid into
	// the cgroup.procs of its own cgroup's parent (args[1] "parent"), says "ready" and
	// how the write went, and waits for stdin EOF.
	osHelpers["escape"] = func(args []string) int {
		d := helperCmd("daemon", args[0])
		d.SysProcAttr = setsidAttr()
		if err := d.Start(); err != nil {
			return 4
		}
		waitRoles(args[0], "daemon")
		dir, err := cgroupfs.Dir("self")
		if err == nil {
			err = os.WriteFile(filepath.Join(filepath.Dir(dir), "cgroup.procs"), []byte(strconv.Itoa(d.Process.Pid)), 0)
		}
		fmt.Printf("ready %v\n", err)
		testkit.BlockForever()
		return 0
	}
}

// cgroupMountOf reports whether dir is on a cgroup v2 file system.
func cgroupMountOf(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// cgroupOf is the cgroup v2 directory of pid.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	dir, err := cgroupfs.Dir(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// An adapter outside the sandbox, with a cgroup and no PID namespace, runs as the
// host's user and may write its parent cgroup's cgroup.procs: root may write every
// cgroup's, an ordinary user (nobody here) those of the cgroup delegated to it, where
// its adapters' cgroups are made. It moves a setsid grandchild there, out of its
// cgroup, which then reads "populated 0". Verify must not call that a proof. Inside the
// sandbox the same adapter cannot write any cgroup.procs, and the proof holds.
func TestCgroupEscapeUnverified(t *testing.T) {
	rootAndNobody(t, nobodyRun{delegated: true}, testCgroupEscapeUnverified)
}

func testCgroupEscapeUnverified(t *testing.T) {
	requireCgroup(t)
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandboxed), func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pids")
			cfg := Config{Isolation: IsolationNoPIDNamespace}
			if sandboxed {
				cfg.Sandbox = &Sandbox{Write: []string{dir}}
			}
			tree := startHelper(t, cfg, "escape", pidfile)
			line := readLine(t, tree.Stdout())
			pids, err := readPidFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(killLater(pids)) // an escaped daemon is the test's to end
			daemon := pids["daemon"]
			own := tree.cgroupPath()
			escaped := !strings.HasPrefix(cgroupOf(t, daemon)+"/", own+"/")
			sup := tree.Supervision()
			if !sup.Mechanism.Has(MechCgroup) || sup.Mechanism.Has(MechPidNamespace) {
				t.Fatalf("supervision %s, want a cgroup without a PID namespace", sup)
			}
			ctx := ctxBound(t)
			if err := tree.Kill(ctx); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			verr := tree.Verify(ctx)
			if sandboxed {
				if escaped || line == "ready <nil>" {
					t.Fatalf("the sandboxed adapter moved its daemon out (%q)", line)
				}
				if verr != nil || sup.NoProof != "" {
					t.Fatalf("Verify = %v, NoProof %q: the sandboxed adapter cannot leave its cgroup", verr, sup.NoProof)
				}
				waitGone(t, map[string]int{"daemon": daemon})
				return
			}
			if !escaped || line != "ready <nil>" {
				t.Fatalf("the daemon did not escape (%q, cgroup %s): the test proves nothing", line, cgroupOf(t, daemon))
			}
			var ue *UnverifiedError
			if !errors.As(verr, &ue) || !errors.Is(verr, ErrUnverified) {
				t.Fatalf("Verify = %v, want an *UnverifiedError: daemon %d runs on outside the cgroup", verr, daemon)
			}
			want := filepath.Join(filepath.Dir(own), "cgroup.procs") + ", an ancestor of its cgroup"
			if !strings.Contains(ue.Reason, want) || !strings.Contains(sup.NoProof, want) {
				t.Fatalf("reason %q, NoProof %q, want them to name %s", ue.Reason, sup.NoProof, want)
			}
			if !pidAlive(daemon) {
				t.Fatalf("daemon %d ended: the escape was expected to outlive the kill", daemon)
			}
		})
	}
}

// cgroupNoProof decides from the sandbox's write grants and the host's access to the
// ancestors' cgroup.procs: as root, and as nobody in a cgroup delegated to it.
func TestCgroupNoProofDecision(t *testing.T) {
	rootAndNobody(t, nobodyRun{delegated: true}, testCgroupNoProofDecision)
}

func testCgroupNoProofDecision(t *testing.T) {
	own := requireCgroup(t)
	cg := &cgroup{path: filepath.Join(own, "adapterkit-notmade")}
	contained := &sandboxPlan{mech: MechLandlock | MechSeccomp, tmp: t.TempDir()}
	mount := filepath.Dir(own)
	for mount != "/" && cgroupMountOf(mount) {
		mount = filepath.Dir(mount)
	}
	tests := []struct {
		name   string
		plan   *sandboxPlan
		write  []string
		proves bool
	}{
		{"uncontained", nil, nil, false},
		{"landlock and seccomp", contained, []string{t.TempDir()}, true},
		{"landlock alone", &sandboxPlan{mech: MechLandlock, tmp: t.TempDir()}, nil, false},
		{"write grant inside the cgroup fs", contained, []string{own}, false},
		{"write grant above the cgroup mount", contained, []string{mount}, false},
		{"write grant on /", contained, []string{"/"}, false},
	}
	for _, tt := range tests {
		cfg := &Config{Sandbox: &Sandbox{Write: tt.write}}
		why := cgroupNoProof(cfg, cg, tt.plan)
		if (why == "") != tt.proves {
			t.Errorf("%s: NoProof %q, want proof %v", tt.name, why, tt.proves)
		}
		if !tt.proves && tt.plan == nil && !strings.Contains(why, filepath.Join(own, "cgroup.procs")) {
			t.Errorf("%s: %q does not name the parent's cgroup.procs", tt.name, why)
		}
	}
}
