package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoFiles returns the text of every scanned file of the repository (see scanned),
// by path relative to the root, without build output, third-party code and compiled
// JavaScript (dist: generated from the TypeScript sources, which are scanned).
func repoFiles(t *testing.T) (root string, files map[string]string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || skippedDirs[d.Name()] || d.Name() == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(scanned, filepath.Ext(path)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

// textFile matches what reads as the name of a text or Markdown file: "rules.md",
// "docs/protocol.md", "control-plane-framing-v1.txt".
var textFile = regexp.MustCompile(`(?:^|[^\w/.-])([\w-]+(?:/[\w.-]+)*\.(?:txt|md))\b`)

// TestCitesOnlyWhatItHas: the repository cites only documents it contains. A .txt or
// .md file named in code, comments or documents outside tests must exist in it (tests
// name the files they create).
func TestCitesOnlyWhatItHas(t *testing.T) {
	_, files := repoFiles(t)
	have := map[string]bool{}
	for p := range files {
		have[filepath.Base(p)] = true
	}
	for _, p := range []string{"LICENSE"} {
		have[p] = true
	}
	for p, text := range files {
		if strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/tests/") || strings.Contains(p, "/test/") {
			continue
		}
		for _, m := range textFile.FindAllStringSubmatch(text, -1) {
			if !have[filepath.Base(m[1])] {
				t.Errorf("%s cites %s, which the repository does not have", p, m[1])
			}
		}
	}
}

// docLink matches a link into a document of docs/ or the root with an anchor:
// protocol.md#r27, control-plane.md#new-versions-live-upgrades.
var docLink = regexp.MustCompile(`\b([\w-]+\.md)#([\w-]+)`)

// anchorsOf returns the anchors of a Markdown document: its <a id> anchors and its
// headings' slugs, as GitHub makes them.
func anchorsOf(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)">`).FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, l := range strings.Split(text, "\n") {
		h, ok := strings.CutPrefix(l, "#")
		if !ok {
			continue
		}
		h = strings.TrimLeft(h, "#")
		slug := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
		out[slug] = true
	}
	return out
}

// TestDocLinksResolve: every link into docs/*.md, README.md or SECURITY.md with an
// anchor (docs/protocol.md#r27, as adapterctl check prints) names an anchor the
// document has.
func TestDocLinksResolve(t *testing.T) {
	root, files := repoFiles(t)
	anchors := map[string]map[string]bool{}
	for _, doc := range []string{"docs/protocol.md", "docs/control-plane.md", "docs/remote.md", "docs/observability.md",
		"docs/operations.md", "docs/supervision.md", "docs/errors.md", "docs/containment.md", "README.md", "SECURITY.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		anchors[filepath.Base(doc)] = anchorsOf(string(b))
	}
	n := 0
	for p, text := range files {
		for _, m := range docLink.FindAllStringSubmatch(text, -1) {
			a, ok := anchors[m[1]]
			if !ok {
				continue // another document's (an SDK's README)
			}
			n++
			if !a[m[2]] && m[2] != "rN" { // "#rN" names the form of the rule anchors
				t.Errorf("%s links to %s#%s, which %s does not have", p, m[1], m[2], m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d anchored links: the search is broken", n)
	}
}
