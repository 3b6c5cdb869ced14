//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
)

// goneBound is how long a test waits for processes to disappear from /proc. It only
// keeps a broken test from hanging; nothing is asserted about how fast they go.
const goneBound = 5 * time.Second

// procEvent is one line of a misbehave pid record, written by the process itself:
// "<kind> <role> <pid> <start>" (see e2e/cmd/misbehave).
type procEvent struct {
	kind  string // proc, exit or call
	role  string
	pid   int
	start uint64 // start time in clock ticks: with pid, the identity of a process
}

func (p procEvent) String() string { return fmt.Sprintf("%s=%d", p.role, p.pid) }

// readRecord parses a pid record; a missing file is an empty record.
func readRecord(t testing.TB, path string) []procEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []procEvent
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("malformed record line %q", line)
		}
		pid, err1 := strconv.Atoi(f[2])
		start, err2 := strconv.ParseUint(f[3], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 || start == 0 {
			t.Fatalf("malformed record line %q", line)
		}
		out = append(out, procEvent{kind: f[0], role: f[1], pid: pid, start: start})
	}
	return out
}

// procsOf returns the "proc" events of a record: every process the tree started.
func procsOf(rec []procEvent) []procEvent {
	var out []procEvent
	for _, e := range rec {
		if e.kind == "proc" {
			out = append(out, e)
		}
	}
	return out
}

// countEvents returns how many events of kind the record holds.
func countEvents(rec []procEvent, kind string) int {
	n := 0
	for _, e := range rec {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// byRole returns the process recorded with role.
func byRole(t testing.TB, rec []procEvent, role string) procEvent {
	t.Helper()
	for _, e := range procsOf(rec) {
		if e.role == role {
			return e
		}
	}
	t.Fatalf("no process %q in the record %v", role, rec)
	return procEvent{}
}

// procStat is the part of /proc/<pid>/stat the tests read.
type procStat struct {
	state          byte
	ppid, pgid, sd int
	start          uint64
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	var st procStat
	st.state = f[0][0]
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgid, _ = strconv.Atoi(f[2])
	st.sd, _ = strconv.Atoi(f[3])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, true
}

// alive reports, from /proc and not from the code under test, whether the recorded
// process still runs code: a zombie or a reused pid is not it.
func (p procEvent) alive() bool {
	st, ok := readProcStat(p.pid)
	return ok && st.start == p.start && st.state != 'Z' && st.state != 'X' && st.state != 'x'
}

func stillRunning(ps []procEvent) []procEvent {
	var out []procEvent
	for _, p := range ps {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// waitGone polls /proc until none of ps runs, and returns how long that took. After
// goneBound it kills the survivors (so that a failure leaves nothing behind) and fails.
func waitGone(t testing.TB, ps []procEvent) time.Duration {
	t.Helper()
	start := time.Now()
	var left []procEvent
	if !testkit.Within(goneBound, func() bool { left = stillRunning(ps); return len(left) == 0 }) {
		killRecorded(left)
		t.Fatalf("still running %v after %v: %v", goneBound, time.Since(start), left)
	}
	return time.Since(start)
}

// killRecorded SIGKILLs those of ps that are still the recorded processes.
func killRecorded(ps []procEvent) {
	for _, p := range stillRunning(ps) {
		_ = unix.Kill(p.pid, unix.SIGKILL)
	}
}

// cleanupRecord makes sure that whatever a test's record names is gone when the test
// ends, even when it failed halfway.
func cleanupRecord(t testing.TB, pidfile string) {
	t.Cleanup(func() {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			return
		}
		var ps []procEvent
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "proc" {
				continue
			}
			pid, _ := strconv.Atoi(f[2])
			start, _ := strconv.ParseUint(f[3], 10, 64)
			ps = append(ps, procEvent{pid: pid, start: start})
		}
		killRecorded(ps)
	})
}

// sigIgnored reports whether the process has sig in its ignored mask (/proc/<pid>/status).
func sigIgnored(t testing.TB, pid int, sig unix.Signal) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return false
}

// fdTarget is what descriptor fd of pid points to (e.g. "pipe:[1234]").
func fdTarget(t testing.TB, pid, fd int) string {
	t.Helper()
	s, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// childrenRunning lists the running children of pid whose executable is exe.
func childrenRunning(pid int, exe string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readProcStat(p)
		if !ok || st.ppid != pid || st.state == 'Z' {
			continue
		}
		if target, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && target == exe {
			out = append(out, p)
		}
	}
	return out
}

// openFDs counts this process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory being read
}

// misbehaveConfig is the initialize configuration of e2e/cmd/misbehave.
type misbehaveConfig struct {
	Mode    string `json:"mode"`
	PidFile string `json:"pidfile"`
	DelayMS int    `json:"delay_ms,omitempty"`
}

// fastLimits are short bounds for tests that are not about the default values.
func fastLimits() *limits.Limits {
	return &limits.Limits{DisconnectGrace: 300 * time.Millisecond, ProcessCleanup: time.Second}
}

// opened is one misbehave adapter under test.
type opened struct {
	*lifecycle.Adapter
	pidfile string
	res     *lifecycle.Reservations
	lim     *limits.Limits
	exits   chan lifecycle.ExitEvent
}

// openMisbehave opens e2e/cmd/misbehave in mode through lifecycle.Open, with its own
// pid record and reservations; mod may adjust the config first.
func openMisbehave(t testing.TB, mode string, delayMS int, mod func(*lifecycle.Config)) *opened {
	t.Helper()
	o := &opened{
		pidfile: filepath.Join(t.TempDir(), "pids"),
		res:     new(lifecycle.Reservations),
		exits:   make(chan lifecycle.ExitEvent, 1),
	}
	cleanupRecord(t, o.pidfile)
	conf, err := json.Marshal(misbehaveConfig{Mode: mode, PidFile: o.pidfile, DelayMS: delayMS})
	if err != nil {
		t.Fatal(err)
	}
	cfg := lifecycle.Config{
		Path:          buildBinT(t, "misbehave"),
		Configuration: conf,
		Limits:        fastLimits(),
		Reservations:  o.res,
		OnExit:        func(ev lifecycle.ExitEvent) { o.exits <- ev },
		Name:          "misbehave-" + mode,
	}
	if mod != nil {
		mod(&cfg)
	}
	o.lim = cfg.Limits
	a, err := lifecycle.Open(ctxFor(t, 20*time.Second), cfg)
	if err != nil {
		t.Fatalf("Open %s: %v", mode, err)
	}
	o.Adapter = a
	t.Cleanup(func() { _ = a.Close() })
	return o
}

// record is the adapter's pid record so far.
func (o *opened) record(t testing.TB) []procEvent { return readRecord(t, o.pidfile) }

// exitEvent waits (bounded) for the adapter's OnExit.
func (o *opened) exitEvent(t testing.TB) lifecycle.ExitEvent {
	t.Helper()
	select {
	case ev := <-o.exits:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("OnExit was not called")
		return lifecycle.ExitEvent{}
	}
}

// provable reports whether the mechanism can prove that a whole tree ended.
func provable(m platform.Mechanism) bool {
	return m.Has(platform.MechCgroup) || m.Has(platform.MechPidNamespace)
}

// checkCleanup checks what lifecycle said about the end of the tree against what the
// mechanism can prove (R63): nil and the package directory released where it can
// prove it, else an honest *platform.UnverifiedError and the directory kept reserved.
// It reports whether the cleanup was verified.
func (o *opened) checkCleanup(t testing.TB, cleanupErr error) bool {
	t.Helper()
	m := o.Supervision().Mechanism
	if !provable(m) && os.Geteuid() == 0 {
		// Decided here, not by the code under test: as root (PID namespaces, cgroups)
		// a mechanism that cannot prove the end is a regression, not a branch to take.
		t.Fatalf("as root the adapter ran with %v, which cannot prove the end of a tree", m)
	}
	checkWantedMechanism(t, m.String())
	if provable(m) {
		if cleanupErr != nil {
			t.Fatalf("cleanup under %v not verified: %v", m, cleanupErr)
		}
		if err := o.res.CanRelease(o.PackageDir()); err != nil {
			t.Fatalf("package directory still reserved after a verified cleanup: %v", err)
		}
		return true
	}
	var ue *platform.UnverifiedError
	if !errors.As(cleanupErr, &ue) {
		t.Fatalf("cleanup under %v (no proof possible) = %v, want *platform.UnverifiedError", m, cleanupErr)
	}
	if err := o.res.CanRelease(o.PackageDir()); !errors.Is(err, lifecycle.ErrReserved) {
		t.Fatalf("unverified cleanup released the package directory: %v", err)
	}
	t.Logf("mechanism %v cannot prove the end of a tree; lifecycle said so: %v", m, cleanupErr)
	return false
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// pollFor waits (bounded) until cond holds; the bound only keeps a broken test from hanging.
func pollFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, cond, "gave up waiting for %s", what)
}
