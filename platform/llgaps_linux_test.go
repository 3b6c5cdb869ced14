package platform

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// gapRight is the Landlock right a gap's reason names ("REFER", "TCP", "scopes"), or "".
var gapRight = regexp.MustCompile(`^Landlock ABI (\d) has no (?:(\S+) rights?|(scopes)) \(ABI \d, Linux [\d.]+\): `)

// gapsOf returns the right each Landlock gap names, checking that it names abi.
func gapsOf(t *testing.T, abi string, dropped []Dropped) []string {
	t.Helper()
	var rights []string
	for _, d := range dropped {
		if d.Mechanism != MechLandlock {
			t.Errorf("gap under %s: %q", d.Mechanism, d.Reason)
			continue
		}
		m := gapRight.FindStringSubmatch(d.Reason)
		if m == nil || m[1] != abi {
			t.Errorf("reason %q does not name what ABI %s lacks", d.Reason, abi)
			continue
		}
		rights = append(rights, m[2]+m[3])
	}
	return rights
}

// At each Landlock ABI, planning a sandbox finds exactly the rights that ABI lacks: with
// BestEffort each is a Dropped with its consequence, without it the start is refused
// naming each. The ruleset is really built at the forced ABI (handling only its rights).
func TestLandlockGapsPerABI(t *testing.T) {
	defer func() { landlockABIHook = nil }()
	full := Sandbox{ConnectPorts: []uint16{80, 443}, UnixSockets: true}
	bare := Sandbox{}
	all := []string{"REFER", "TRUNCATE", "TCP", "IOCTL_DEV", "scopes"}
	// consequence is what each reason must say happens.
	consequence := map[string]string{
		"REFER":     "into another directory is refused (EXDEV)",
		"TRUNCATE":  "truncate(2) empties any file the adapter's user may write, outside the grants too",
		"TCP":       "may connect to any TCP port, not only to 80,443, and bind any",
		"IOCTL_DEV": "ioctl(2) on a device the adapter opens",
		"scopes":    "signal any process outside its sandbox",
	}
	for _, tc := range []struct {
		abi  int
		want []string // with full; bare wants the same without TCP
	}{
		{1, all},
		{2, all[1:]},
		{3, all[2:]},
		{4, all[3:]},
		{5, all[4:]},
		{6, nil},
		{7, nil},
	} {
		landlockABIHook = func() (int, error) { return tc.abi, nil }
		abi := string(rune('0' + tc.abi))
		for _, pol := range []Sandbox{full, bare} {
			want := tc.want
			if len(pol.ConnectPorts) == 0 {
				want = slices.DeleteFunc(slices.Clone(want), func(r string) bool { return r == "TCP" })
			}
			cfg := &Config{Path: mustExecutable()}
			sb := pol
			sb.BestEffort = true
			cfg.Sandbox = &sb
			p, err := planSandbox(cfg)
			if err != nil {
				t.Fatalf("ABI %d %+v, best effort: %v", tc.abi, pol, err)
			}
			p.release()
			if got := gapsOf(t, abi, p.dropped); !slices.Equal(got, want) {
				t.Errorf("ABI %d %+v: gaps %v, want %v", tc.abi, pol, got, want)
			}
			for _, d := range p.dropped {
				m := gapRight.FindStringSubmatch(d.Reason)
				if m != nil && !strings.Contains(d.Reason, consequence[m[2]+m[3]]) {
					t.Errorf("ABI %d: %q does not say %q", tc.abi, d.Reason, consequence[m[2]+m[3]])
				}
				if m != nil && m[3] == "scopes" && strings.Contains(d.Reason, "abstract") != pol.UnixSockets {
					t.Errorf("ABI %d, Unix sockets %v: %q", tc.abi, pol.UnixSockets, d.Reason)
				}
			}
			wantDesc := "landlock v" + abi + ": fs"
			if !strings.HasPrefix(p.desc, wantDesc) {
				t.Errorf("ABI %d: sandbox %q, want %q", tc.abi, p.desc, wantDesc)
			}

			sb.BestEffort = false
			p, err = planSandbox(cfg)
			if len(want) == 0 {
				if err != nil {
					t.Errorf("ABI %d %+v refused: %v", tc.abi, pol, err)
				} else {
					p.release()
				}
				continue
			}
			if err == nil {
				p.release()
				t.Errorf("ABI %d %+v: planned without BestEffort despite %v", tc.abi, pol, want)
				continue
			}
			if !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("ABI %d: %v does not match errors.ErrUnsupported", tc.abi, err)
			}
			for _, r := range want {
				if !strings.Contains(err.Error(), "has no "+r) {
					t.Errorf("ABI %d: refusal does not name %s: %v", tc.abi, r, err)
				}
			}
		}
	}
}

// A contained adapter started BestEffort under a Landlock ruleset of ABI 2 (which
// handles no TRUNCATE right, as on Linux 6.1) really truncates a file outside its
// grants, and one granted for reading only; Supervision.Dropped names TRUNCATE, and the
// start logs each gap once at WARN with the adapter's path. The same probes at the
// kernel's own ABI are refused (the control). As root and as nobody, whose own files
// an adapter of nobody's truncates alike.
func TestSandboxBestEffortTruncate(t *testing.T) {
	rootAndNobody(t, nobodyRun{}, testSandboxBestEffortTruncate)
}

func testSandboxBestEffortTruncate(t *testing.T) {
	if abi, err := landlockABI(); err != nil || abi < 3 {
		t.Skipf("the control needs Landlock ABI 3: %d %v", abi, err)
	}
	defer func() { landlockABIHook = nil }()
	readable, outside := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		abi     int
		want    string // the probes' outcome: "ok" or the start of "err ..."
		dropped bool   // TRUNCATE reported
	}{
		{0, "err", false}, // the kernel's ABI
		{2, "ok", true},
	} {
		landlockABIHook = nil
		if tc.abi != 0 {
			landlockABIHook = func() (int, error) { return tc.abi, nil }
		}
		victim, granted := filepath.Join(outside, "victim"), filepath.Join(readable, "granted")
		for _, f := range []string{victim, granted} {
			if err := os.WriteFile(f, []byte("content"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var logs bytes.Buffer
		cfg := Config{
			Sandbox: &Sandbox{Read: []string{readable}, BestEffort: true},
			Logger:  hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn}),
		}
		res, tree := probeResults(t, cfg, "truncate:"+victim, "otrunc:"+granted)
		<-tree.Exited()
		sup := tree.Supervision()
		for _, k := range []string{"truncate:" + victim, "otrunc:" + granted} {
			if !strings.HasPrefix(res[k], tc.want) {
				t.Errorf("ABI %d: %s: %q, want %s", tc.abi, k, res[k], tc.want)
			}
		}
		for _, f := range []string{victim, granted} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if truncated := fi.Size() == 0; truncated != tc.dropped {
				t.Errorf("ABI %d: %s truncated %v", tc.abi, f, truncated)
			}
		}
		var truncGap string
		for _, d := range sup.Dropped {
			if d.Mechanism == MechLandlock && strings.Contains(d.Reason, "no TRUNCATE right") {
				truncGap = d.Reason
			}
		}
		if (truncGap != "") != tc.dropped {
			t.Errorf("ABI %d: supervision %s; TRUNCATE reported: %v, want %v", tc.abi, sup, truncGap != "", tc.dropped)
		}
		nwarn := strings.Count(logs.String(), "sandbox not fully enforced")
		var ngaps int
		for _, d := range sup.Dropped {
			if d.Mechanism&(MechLandlock|MechSeccomp) != 0 {
				ngaps++
			}
		}
		if nwarn != ngaps || (tc.dropped && (!strings.Contains(logs.String(), "no TRUNCATE right") ||
			!strings.Contains(logs.String(), "path="+mustExecutable()))) {
			t.Errorf("ABI %d: %d warnings for %d gaps:\n%s", tc.abi, nwarn, ngaps, logs.String())
		}
	}
}
