package platform

import (
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
