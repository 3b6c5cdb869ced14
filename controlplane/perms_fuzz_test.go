package controlplane

import (
	"strings"
	"testing"
)

// FuzzParseAllow: any text is a grant with a known role and a non-empty name, or an
// ErrConfig; never a panic.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{"alice=call", "a=read", "spki:sha256/" + strings.Repeat("A", 43) + "==read", "=", "x==", "spki:=call"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, role, err := ParseAllow(s)
		if err != nil {
			return
		}
		if name == "" || (role != RoleRead && role != RoleCall) || !strings.HasSuffix(s, "="+string(role)) {
			t.Fatalf("ParseAllow(%q) = %q, %q", s, name, role)
		}
	})
}
