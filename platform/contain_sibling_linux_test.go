package platform

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
)

// One sandboxed adapter cannot signal another adapter of the same host, whatever the
// isolation: each launcher stage gives its adapter a Landlock domain of its own (sibling
// domains are outside each other's signal scope), even with the same policy. Without a
// PID namespace (no-pidns, pgroup) the sibling's pid is there to be named; in one
// (auto) the sibling is not even visible. The control, the attacker without a sandbox,
// reaches the sandboxed sibling, so the probe can show a refusal.
func TestSandboxCannotSignalSibling(t *testing.T) {
	attack := func(t *testing.T, attacker Config, victim *Tree) string {
		t.Helper()
		pid := strconv.Itoa(victim.Pid())
		tree := startHelperArgs(t, attacker, launchTestArg, "hostsignal", pid, "real")
		if _, err := io.WriteString(tree.Stdin(), pid+"\n"); err != nil {
			t.Fatal(err)
		}
		tree.Stdin().Close()
		line, _ := bufio.NewReader(tree.Stdout()).ReadString('\n')
		_, r, _ := strings.Cut(strings.TrimSpace(line), " ")
		return r
	}
	for _, is := range isolations {
		t.Run(is.name, func(t *testing.T) {
			victim := startHelper(t, Config{Sandbox: &Sandbox{}, Isolation: is.iso}, "block")
			if is.iso != IsolationAuto {
				if r := attack(t, Config{Isolation: IsolationProcessGroup}, victim); r != "ok" {
					t.Fatalf("control: %s; the probe cannot show a refusal", r)
				}
			}
			r := attack(t, Config{Sandbox: &Sandbox{}, Isolation: is.iso}, victim)
			if !strings.HasPrefix(r, "err ") {
				t.Errorf("a sandboxed adapter could signal its sandboxed sibling: %q", r)
			}
			select {
			case <-victim.Exited():
				t.Errorf("the sibling ended: %v", victim.ExitState())
			default:
			}
		})
	}
}
