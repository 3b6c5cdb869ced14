package platform

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// The Windows environment block, tested on every platform: sorted case-insensitively by
// name (Win32 requires it), stable for duplicates, never nil, bad entries refused.
func TestEnvBlock(t *testing.T) {
	good := []struct {
		env  []string
		want string // the block with NULs as "|"
	}{
		{nil, "||"},
		{[]string{}, "||"},
		{[]string{"A=1"}, "A=1||"},
		{[]string{"A=1", "B=two words", "EMPTY="}, "A=1|B=two words|EMPTY=||"},
		{[]string{"Path=C:\\Windows", "=C:=C:\\dir"}, "=C:=C:\\dir|Path=C:\\Windows||"},
		// sorted by name ignoring case; duplicates keep their order
		{[]string{"b=2", "A=1", "a=3"}, "A=1|a=3|b=2||"},
		{[]string{"windir=C:\\W", "TEMP=C:\\T", "Path=P", "path=p2"}, "Path=P|path=p2|TEMP=C:\\T|windir=C:\\W||"},
		// the name ends at the first "=": "A_B" sorts after "A" ("=" is not compared)
		{[]string{"A_B=1", "A=2"}, "A=2|A_B=1||"},
		{[]string{"X=é€😀"}, "X=é€😀||"},
		// non-ASCII names compare in upper case, by UTF-16 code unit
		{[]string{"éa=1", "Éb=2", "Z=3"}, "Z=3|éa=1|Éb=2||"},
	}
	for _, tc := range good {
		block, err := envBlock(tc.env)
		if err != nil {
			t.Errorf("envBlock(%q): %v", tc.env, err)
			continue
		}
		got := strings.ReplaceAll(string(utf16.Decode(block)), "\x00", "|")
		if got != tc.want {
			t.Errorf("envBlock(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
	for _, env := range [][]string{{""}, {"A=1", "", "B=2"}, {"NOVALUE"}, {"=C:"}, {"=="}, {"A=1\x00B=2"}, {"=x"}} {
		if _, err := envBlock(env); err == nil {
			t.Errorf("envBlock(%q) accepted", env)
		}
	}
}

// Duplicate names: the last value wins, one entry reaches the adapter, in the place
// of the first; names fold case on Windows only; entries without "=" stay.
func TestDedupEnv(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		fold bool
		want []string
	}{
		{[]string{"A=1", "B=2"}, false, []string{"A=1", "B=2"}},
		{[]string{"PATH=/usr/bin", "HOME=/h", "PATH=/safe"}, false, []string{"PATH=/safe", "HOME=/h"}},
		{[]string{"A=1", "A=2", "A=3"}, false, []string{"A=3"}},
		{[]string{"Path=C:\\x", "PATH=C:\\safe"}, true, []string{"PATH=C:\\safe"}},
		{[]string{"Path=C:\\x", "PATH=C:\\safe"}, false, []string{"Path=C:\\x", "PATH=C:\\safe"}},
		{[]string{"=C:=C:\\a", "=C:=C:\\b", "A=1"}, true, []string{"=C:=C:\\b", "A=1"}},
		{[]string{"junk", "A=1", "junk", "A=2"}, false, []string{"junk", "A=2", "junk"}},
	} {
		if got := dedupEnv(tc.in, tc.fold); !slices.Equal(got, tc.want) {
			t.Errorf("dedupEnv(%q, %v) = %q, want %q", tc.in, tc.fold, got, tc.want)
		}
	}
}
