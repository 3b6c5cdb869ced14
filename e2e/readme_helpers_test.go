package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// sdkREADMESteps returns the blocks of an SDK README's "Start from an empty directory"
// section that a user would paste: its sh blocks in order, and the one block in srcLang
// (the adapter's source). It skips the test where one of tools is missing, unless
// $ADAPTERKIT_REQUIRE_SDKS names sdk, and fails it where the section is missing. The
// caller checks the number of blocks its README should have.
func sdkREADMESteps(t *testing.T, sdk, readme, srcLang string, tools ...string) (sh []string, src, section string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if sdkRequired(sdk) {
				t.Fatalf("%s: %v (ADAPTERKIT_REQUIRE_SDKS names %s)", tool, err, sdk)
			}
			t.Skipf("%s needs %s: %v", readme, tool, err)
		}
	}
	b, err := os.ReadFile("../" + readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start, end := strings.Index(text, "## Start from an empty directory"), strings.Index(text, "## What the SDK does")
	if start < 0 || end < start {
		t.Fatalf(`%s has no "## Start from an empty directory" before "## What the SDK does"`, readme)
	}
	section = text[start:end]
	for _, m := range regexp.MustCompile("(?ms)^```(sh|"+regexp.QuoteMeta(srcLang)+")\n(.*?)^```").FindAllStringSubmatch(section, -1) {
		if m[1] == srcLang {
			src = m[2]
		} else {
			sh = append(sh, m[2])
		}
	}
	return sh, src, section
}
