package platform

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Which mechanisms a start tries follows from Config.Isolation and the host's
// privilege, and what is turned off is reported with that reason.
func TestChoiceByIsolation(t *testing.T) {
	priv := hasCapSysAdmin()
	tests := []struct {
		iso        Isolation
		wantCgroup bool
		ns         []nsChoice // when privileged
		nsUnpriv   []nsChoice // when not
		why        string     // nsWhy substring, "" when a namespace is tried
	}{
		{IsolationAuto, true, []nsChoice{{}, {userns: true}}, []nsChoice{{userns: true}}, ""},
		{IsolationNoUserNamespace, true, []nsChoice{{}}, nil, "IsolationNoUserNamespace"},
		{IsolationNoPIDNamespace, true, nil, nil, "IsolationNoPIDNamespace"},
		{IsolationProcessGroup, false, nil, nil, "IsolationProcessGroup"},
	}
	for _, tt := range tests {
		c := newChoice(&Config{Isolation: tt.iso})
		want := tt.nsUnpriv
		if priv {
			want = tt.ns
		}
		if c.wantCgroup != tt.wantCgroup || len(c.ns) != len(want) {
			t.Errorf("isolation %d: cgroup %v ns %v, want %v %v", tt.iso, c.wantCgroup, c.ns, tt.wantCgroup, want)
			continue
		}
		for i := range want {
			if c.ns[i] != want[i] {
				t.Errorf("isolation %d: ns %v, want %v", tt.iso, c.ns, want)
			}
		}
		if (len(c.ns) == 0) && !strings.Contains(c.nsWhy, tt.why) {
			t.Errorf("isolation %d: reason %q, want it to name %s", tt.iso, c.nsWhy, tt.why)
		}
		atts := c.attempts(true)
		if last := atts[len(atts)-1]; last != (attempt{}) {
			t.Errorf("isolation %d: last attempt %+v, want the plain process group", tt.iso, last)
		}
		sup := c.supervision(usedMechanism(attempt{}), attempt{}, atts)
		if len(c.ns) == 0 && !strings.Contains(sup.String(), tt.why) {
			t.Errorf("isolation %d: report %q does not say %s", tt.iso, sup, tt.why)
		}
	}
}

// A failure of one start is reported for that adapter and does not weaken
// the next one (no process-wide latch): an injected EPERM on every PID namespace
// attempt, then none.
func TestFailureDoesNotLatch(t *testing.T) {
	if !hasCapSysAdmin() {
		t.Skip("needs CAP_SYS_ADMIN for a PID namespace without a user namespace; the unprivileged path is TestUserNamespaceRefusedFallback")
	}
	attemptHook = func(a attempt) error {
		if a.pidns {
			return syscall.EPERM
		}
		return nil
	}
	first := startHelper(t, Config{}, "block")
	attemptHook = nil
	sup := first.Supervision()
	if sup.Mechanism.Has(MechPidNamespace) || !strings.Contains(sup.String(), "pidns dropped: creating a PID namespace failed: operation not permitted") {
		t.Fatalf("with PID namespaces refused: %s", sup)
	}
	second := startHelper(t, Config{}, "block")
	if !second.Supervision().Mechanism.Has(MechPidNamespace) {
		t.Fatalf("the next start stayed weakened: %s", second.Supervision())
	}
	t.Logf("first: %s; second: %s", sup, second.Supervision())
}

// explainUserNS names the system setting only for the errors it can cause.
func TestExplainUserNSKeepsOtherErrors(t *testing.T) {
	if err := explainUserNS(syscall.EAGAIN); err != syscall.EAGAIN {
		t.Fatalf("EAGAIN became %v", err)
	}
	if err := explainUserNS(syscall.ENOSPC); !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("ENOSPC became %v", err)
	}
}

// hasCapSysAdmin (capget) agrees with the effective set /proc/self/status shows.
func TestHasCapSysAdminMatchesProcStatus(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	var want bool
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			want = caps&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	if got := hasCapSysAdmin(); got != want {
		t.Fatalf("hasCapSysAdmin() = %v, /proc/self/status says %v", got, want)
	}
}
