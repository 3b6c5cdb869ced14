package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tableSeparator is a Markdown table's header separator row: | --- | :---: |.
var tableSeparator = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)

// TestTablesUnbroken: every row of a Markdown table in README.md and docs/*.md belongs
// to a table — a row after a paragraph (a table that text was put into the middle of)
// is rendered as text, its header lost.
func TestTablesUnbroken(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"), filepath.Join("..", "SECURITY.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		inTable, inFence := false, false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inFence = !inFence
			}
			row := !inFence && strings.HasPrefix(l, "|")
			switch {
			case !row:
				inTable = false
			case inTable:
			case i+1 < len(lines) && tableSeparator.MatchString(lines[i+1]):
				inTable = true // a header
			default:
				t.Errorf("%s:%d: a table row outside a table (text inside a table?): %s", f, i+1, l)
			}
		}
	}
}
