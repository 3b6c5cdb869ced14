package controlplane

import (
	"strings"
	"testing"
)

// FuzzParseAllow: any text is a grant with a known role and a non-empty name in its
// canonical spelling (cn:NAME or spki:sha256/BASE64, which parses back to itself),
// or an ErrConfig; never a panic.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{"alice=call", "a=read", "spki:sha256/" + strings.Repeat("A", 43) + "==read", "=", "x==", "spki:=call", "cn:a:b=read", "SPKI:SHA256/" + strings.Repeat("A", 43) + "==call"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, role, err := ParseAllow(s)
		if err != nil {
			return
		}
		if name == "" || (role != RoleRead && role != RoleLogs && role != RoleCall) || !strings.HasSuffix(s, "="+string(role)) {
			t.Fatalf("ParseAllow(%q) = %q, %q", s, name, role)
		}
		if !strings.HasPrefix(name, cnPrefix) && !strings.HasPrefix(name, spkiPrefix) {
			t.Fatalf("ParseAllow(%q) = %q: not canonical", s, name)
		}
		again, role2, err := ParseAllow(name + "=" + string(role))
		if err != nil || again != name || role2 != role {
			t.Fatalf("ParseAllow(%q) = %q; parsed again: %q, %q, %v", s, name, again, role2, err)
		}
	})
}
