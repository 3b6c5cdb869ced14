// Package docs_test checks that the protocol reference in this directory defines every
// numbered rule (R1.., A1..) that the repository cites: in Go code and tests, in the
// output of adapterctl check (which is built from Go strings), in the other languages'
// adapters and SDKs, and in the Markdown documents.
package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// citation matches a rule number or a range of them (R9-R14, R1–R64, A1..A37). A number
// glued to a preceding word character or hyphen (a UUID's "-A567-", "SHA256") is not a
// citation.
var citation = regexp.MustCompile(`(?:^|[^\w-])([RA])([0-9]+)(?:(?:-|–|\.\.)([RA])?([0-9]+))?\b`)

// anchor matches the definitions in protocol.md: <a id="r17"></a>**R17**.
var anchor = regexp.MustCompile(`<a id="([ra])([0-9]+)"></a>\*\*([RA])([0-9]+)\*\*`)

// scanned are the file kinds whose text may cite rules.
var scanned = []string{".go", ".md", ".py", ".ts", ".js", ".mjs", ".rs", ".txt"}

// skippedDirs are directories of build output and third-party code.
var skippedDirs = map[string]bool{"build": true, "node_modules": true, "target": true, "vendor": true}

// defined returns the rule numbers protocol.md defines, as "R17", "A7".
func defined(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range anchor.FindAllStringSubmatch(string(b), -1) {
		if strings.ToUpper(m[1]) != m[3] || m[2] != m[4] {
			t.Errorf("protocol.md: anchor %s%s labels %s%s", m[1], m[2], m[3], m[4])
		}
		id := m[3] + m[4]
		if out[id] {
			t.Errorf("protocol.md defines %s twice", id)
		}
		out[id] = true
	}
	return out
}

// cited returns every rule number cited in text, ranges expanded.
func cited(text string) []string {
	var out []string
	for _, m := range citation.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+m[2])
		if m[4] == "" {
			continue
		}
		kind := m[1]
		if m[3] != "" && m[3] != m[1] {
			out = append(out, m[3]+m[4])
			continue
		}
		from, to := atoi(m[2]), atoi(m[4])
		for n := from + 1; n <= to && n-from < 200; n++ {
			out = append(out, kind+itoa(n))
		}
	}
	return out
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestCitedRulesDefined fails for any rule number cited in the repository that
// protocol.md does not define.
func TestCitedRulesDefined(t *testing.T) {
	def := defined(t)
	for n := 1; n <= 64; n++ {
		if !def["R"+itoa(n)] {
			t.Errorf("protocol.md does not define R%d", n)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string][]string{}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || skippedDirs[d.Name()]) {
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
		files++
		rel, _ := filepath.Rel(root, path)
		for _, id := range cited(string(b)) {
			if !def[id] && !slices.Contains(missing[id], rel) {
				missing[id] = append(missing[id], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned only %d files under %s: the walk is broken", files, root)
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Errorf("%s is cited but not defined in docs/protocol.md: %s", id, strings.Join(missing[id], ", "))
	}
}

// TestCitationPattern pins what counts as a citation.
func TestCitationPattern(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"// R17: first request", []string{"R17"}},
		{"(R9-R14, A4)", []string{"R9", "R10", "R11", "R12", "R13", "R14", "A4"}},
		{"`R1`–`R64`", []string{"R1", "R64"}},
		{"R1–R3", []string{"R1", "R2", "R3"}},
		{"F47AC10B-58CC-4372-A567-0E02B2C3D479", nil},
		{"SHA256 and AR5 and R2D2", nil},
		{`{"R27", "A7"}`, []string{"R27", "A7"}},
	} {
		if got := cited(c.text); !slices.Equal(got, c.want) {
			t.Errorf("cited(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
