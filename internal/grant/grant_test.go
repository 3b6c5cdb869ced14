package grant

import (
	"strings"
	"testing"
)

// FuzzParse: any text is a grant with a known role and a non-empty name in its
// canonical spelling (cn:NAME or spki:sha256/BASE64, which parses back to itself),
// or an error; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"alice=call", "a=read", "spki:sha256/" + strings.Repeat("A", 43) + "==read", "=", "x==", "spki:=call", "cn:a:b=read", "SPKI:SHA256/" + strings.Repeat("A", 43) + "==call"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, role, err := Parse(s)
		if err != nil {
			return
		}
		if name == "" || !KnownRole(role) || !strings.HasSuffix(s, "="+role) {
			t.Fatalf("Parse(%q) = %q, %q", s, name, role)
		}
		if !strings.HasPrefix(name, CNPrefix) && !strings.HasPrefix(name, SPKIPrefix) {
			t.Fatalf("Parse(%q) = %q: not canonical", s, name)
		}
		again, role2, err := Parse(name + "=" + role)
		if err != nil || again != name || role2 != role {
			t.Fatalf("Parse(%q) = %q; parsed again: %q, %q, %v", s, name, again, role2, err)
		}
	})
}

// Grants: canonical names, and the spellings refused rather than taken as common names.
func TestParse(t *testing.T) {
	pin := "spki:sha256/" + strings.Repeat("A", 43) + "="
	tests := []struct {
		in   string
		name string
		role string
		ok   bool
	}{
		{"alice=call", "cn:alice", Call, true},
		{"cn:alice=call", "cn:alice", Call, true},
		{"CN:alice=call", "cn:alice", Call, true},
		{"cn:a:b=call", "cn:a:b", Call, true},
		{"ops team=read", "cn:ops team", Read, true},
		{pin + "=read", pin, Read, true},
		{"SPKI:SHA256/" + strings.Repeat("A", 43) + "==read", pin, Read, true},
		{"Spki:sha256/" + strings.Repeat("A", 43) + "==read", pin, Read, true},
		// Refused, not taken as a common name.
		{"sha256/" + strings.Repeat("A", 43) + "==read", "", "", false},
		{" alice=read", "", "", false},
		{"alice =read", "", "", false},
		{"cn:=read", "", "", false},
		{"cn: alice=read", "", "", false},
		{"a\nb=read", "", "", false},
		{"uri:x=read", "", "", false},
		{"spki:sha256/" + strings.Repeat("A", 42) + "==read", "", "", false}, // 31 bytes
		{"spki:sha256/" + strings.Repeat("A", 44) + "=read", "", "", false},  // 33 bytes
		{pin, "", "", false},
		{"alice", "", "", false},
		{"=read", "", "", false},
		{"alice=admin", "", "", false},
		{"spki:sha256/!!=call", "", "", false},
		{"spki:md5/" + strings.Repeat("A", 43) + "==call", "", "", false},
	}
	for _, tc := range tests {
		name, role, err := Parse(tc.in)
		if (err == nil) != tc.ok || name != tc.name || role != tc.role {
			t.Errorf("Parse(%q) = %q, %q, %v", tc.in, name, role, err)
		}
	}
}
