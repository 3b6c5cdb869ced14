package docs_test

import (
	"os"
	"strings"
	"testing"
)

// TestProtocolDocumentsWorkingDirectory: the paragraph of docs/protocol.md on the
// adapter's environment also says which working directory an adapter starts in (its
// executable's directory, pinned by platform.TestWorkingDirectory) and how a host
// changes it, so that an adapter that writes files relative to it knows where they go.
func TestProtocolDocumentsWorkingDirectory(t *testing.T) {
	b, err := os.ReadFile("protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "**The environment.**")
	if start < 0 {
		t.Fatal("protocol.md has no paragraph on the environment")
	}
	end := strings.Index(doc[start:], "\n- ")
	if end < 0 {
		end = len(doc) - start
	}
	section := strings.Join(strings.Fields(doc[start:start+end]), " ")
	for _, want := range []string{"**The working directory.**", "the directory of its executable", "`platform.Config.Dir`", "discovery directory", "`TMPDIR`"} {
		if !strings.Contains(section, want) {
			t.Errorf("the environment section lacks %q", want)
		}
	}
}
