package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
)

// inspect prints every gap of a best-effort sandbox, one line each with its reason, and
// lists each in the JSON "dropped". The kernel's Landlock ABI cannot be forced from the
// command line, so the supervision is the one a start under Landlock ABI 2 reports
// (platform.TestLandlockGapsPerABI checks that it does).
func TestInspectPrintsSandboxGaps(t *testing.T) {
	gaps := []string{
		"Landlock ABI 2 has no TRUNCATE right (ABI 3, Linux 6.2): truncate(2) empties any file the adapter's user may write, outside the grants too",
		"Landlock ABI 2 has no IOCTL_DEV right (ABI 5, Linux 6.10): ioctl(2) on a device the adapter opens is not restricted",
		"Landlock ABI 2 has no scopes (ABI 6, Linux 6.12): the adapter may signal any process outside its sandbox",
	}
	sup := platform.Supervision{
		Mechanism: platform.MechCgroup | platform.MechLandlock | platform.MechSeccomp,
		Sandbox:   "landlock v2: fs; seccomp: 98 syscalls denied, 24 checked by argument, sockets none; net none",
		Dropped:   []platform.Dropped{{Mechanism: platform.MechPidNamespace, Reason: "turned off by Config.Isolation"}},
	}
	for _, g := range gaps {
		sup.Dropped = append(sup.Dropped, platform.Dropped{Mechanism: platform.MechLandlock, Reason: g})
	}
	out := inspectOutput{Name: "echo", Path: "/x/echo", Supervision: sup.Mechanism.String(), Sandbox: sup.Sandbox,
		Dropped: droppedOf(sup), CleanupVerified: true}

	var text bytes.Buffer
	printInspect(&env{stdout: &text}, out)
	lines := strings.Split(text.String(), "\n")
	for _, g := range gaps {
		n := 0
		for _, l := range lines {
			if l == "  landlock dropped: "+g {
				n++
			}
		}
		if n != 1 {
			t.Errorf("gap printed %d times, want once: %q\n%s", n, g, text.String())
		}
	}
	if !strings.Contains(text.String(), "  pidns dropped: turned off by Config.Isolation\n") {
		t.Errorf("the supervision gap is missing:\n%s", text.String())
	}

	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back inspectOutput
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range back.Dropped {
		if d.Mechanism == "landlock" {
			got = append(got, d.Reason)
		}
	}
	if strings.Join(got, "\n") != strings.Join(gaps, "\n") {
		t.Errorf("JSON dropped %v, want %v", back.Dropped, gaps)
	}
}
