package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A28: an adapter that carries on after a host fault it cannot tie to a request id, or
// that crashes on it, fails the host-fault checks; the other checks still pass.
func TestCheckHostFaults(t *testing.T) {
	faults := []string{checkFaultJSON, checkFaultType, checkFaultEmpty}
	tests := []struct {
		adapter string
		detail  string
	}{
		{bad("fragile_v1.0.0"), "still running 2s after the fault, with stdin open"},
		{bad("panicky_v1.0.0"), "but crashed: stderr says"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.adapter), func(t *testing.T) {
			out, r := runCheckJSON(t, tt.adapter)
			if r.code != ExitFailed || out.Passed || !out.CleanupVerified {
				t.Fatalf("exit %d passed %v cleanup %v\n%s\n%s", r.code, out.Passed, out.CleanupVerified, r.stdout, r.stderr)
			}
			got := statuses(out)
			for _, name := range faults {
				if c := got[name]; c.Status != statusFail || !strings.Contains(c.Detail, tt.detail) {
					t.Errorf("check %q: %+v, want fail with %q", name, c, tt.detail)
				}
			}
			for _, name := range []string{checkHandshake, checkCatalog, checkFrames, checkEOF} {
				if c := got[name]; c.Status != statusPass {
					t.Errorf("check %q: %+v, want pass", name, c)
				}
			}
		})
	}
}

// --slow names the busy check's slow method and params; a method that waits until it
// is cancelled works (the unanswered requests are cancelled once one is busy). A skip
// says how to make the check run.
func TestCheckSlow(t *testing.T) {
	thermo := good("thermometer_v1.0.0")
	r := runCmd(t, "", "check", "--json", "--timeout", "10s", "--slow", `example.device.read {"probe":"slow"}`, thermo)
	out := decodeCheck(t, r)
	if c := statuses(out)[checkBusy]; c.Status != statusPass || !strings.Contains(c.Detail, `example.device.read {"probe":"slow"} answered busy`) {
		t.Errorf("busy with --slow: %+v\n%s", c, r.stderr)
	}
	if !out.Passed {
		t.Errorf("check failed with --slow: %+v", out.Checks)
	}
	r = runCmd(t, "", "check", "--json", "--timeout", "10s", "--slow", "example.device.nope", thermo)
	c := statuses(decodeCheck(t, r))[checkBusy]
	if c.Status != statusSkip || !strings.Contains(c.Detail, "does not advertise") || !strings.Contains(c.Detail, "to make it run") {
		t.Errorf("busy with an unknown --slow method: %+v", c)
	}
	runCmd(t, "", "check", "--slow", "example.device.read [1]", thermo).want(t, ExitUsage, nil, []string{"PARAMS_JSON is not one JSON object"})
}

// decodeCheck decodes check --json output.
func decodeCheck(t *testing.T, r result) checkOutput {
	t.Helper()
	var out checkOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("check --json: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return out
}

// Every check cites rules that docs/protocol.md defines, links to their anchors, and
// the text report says where to read more.
func TestCheckLinksToProtocolDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", protocolDoc))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9]+)"></a>`).FindAllStringSubmatch(string(doc), -1) {
		anchors[m[1]] = true
	}
	for _, name := range checkOrder {
		rules := checkRules[name]
		if len(rules) == 0 {
			t.Errorf("check %q cites no rule", name)
		}
		for _, d := range ruleDocs(rules) {
			anchor, ok := strings.CutPrefix(d, protocolDoc+"#")
			if !ok || !anchors[anchor] {
				t.Errorf("check %q links to %s, which %s does not define", name, d, protocolDoc)
			}
		}
	}
	r := runCmd(t, "", "check", "--dir", goodDir, "echo")
	r.want(t, ExitOK, []string{"The rules are explained in docs/protocol.md (" + protocolDocURL + ")"}, nil)
	r = runCmd(t, "", "check", bad("fragile_v1.0.0"))
	r.want(t, ExitFailed, []string{"for the checks that did not pass:", checkFaultJSON, "docs/protocol.md#a28 docs/protocol.md#r2"}, nil)
}
