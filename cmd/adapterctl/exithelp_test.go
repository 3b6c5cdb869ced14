package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Exit status 3 has one meaning wherever it is explained: the adapter or the daemon
// could not serve the command. Every command's help ends with its exit statuses;
// serve, certs and contract end with their own, not the call and check list that does not apply
// to them.
func TestExitStatusHelp(t *testing.T) {
	line3 := regexp.MustCompile(`(?m)^  3  (.*)$`)
	for _, c := range commands {
		r := runCmd(t, "", c.name, "--help")
		if r.code != ExitOK {
			t.Fatalf("%s --help: exit %d", c.name, r.code)
		}
		i := strings.LastIndex(r.stdout, "\nExit status:\n")
		if i < 0 {
			t.Errorf("%s --help does not end with its exit statuses", c.name)
			continue
		}
		exits := r.stdout[i:]
		callList := strings.Contains(exits, "a check failed (check)")
		if own := c.name == "serve" || c.name == "certs" || c.name == "contract"; own == callList {
			t.Errorf("%s --help ends with the call and check exit list: %v, want %v:\n%s", c.name, callList, !own, exits)
		}
		if m := line3.FindStringSubmatch(exits); m != nil && !strings.Contains(m[1], "could not serve") {
			t.Errorf("%s --help: exit status 3 is %q, not \"could not serve\"", c.name, m[1])
		}
		if n := strings.Count(r.stdout, "\nExit status:\n"); n != 1 {
			t.Errorf("%s --help lists exit statuses %d times", c.name, n)
		}
	}
	for _, doc := range []string{"doc.go", filepath.Join("..", "..", "README.md")} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "//", "")), " ")
		if !regexp.MustCompile(`\b3 the adapter or the daemon could not serve the command\b`).MatchString(text) {
			t.Errorf("%s does not give exit status 3 the one meaning", doc)
		}
		if strings.Contains(text, "3 the connection broke") {
			t.Errorf("%s still says exit status 3 is only a broken connection", doc)
		}
	}
}
