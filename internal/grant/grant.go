// Package grant is the grammar of the grants the control-plane daemon admits remote
// clients by: a client identity (a certificate's subject common name, or the pin of
// its public key) and a role. Package controlplane checks RemoteConfig.Allow with it
// and adapterctl parses its --allow NAME=ROLE flags with it, so that both accept and
// refuse exactly the same spellings.
//
// It is in the module's shared layer (internal/) and imports no package of the module,
// so that two layers, controlplane and adapterctl, read grants alike.
package grant

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The roles (controlplane.RoleRead, RoleLogs and RoleCall).
const (
	Read = "read"
	Logs = "logs"
	Call = "call"
)

// KnownRole reports whether role is one of Read, Logs and Call.
func KnownRole(role string) bool { return role == Read || role == Logs || role == Call }

// The namespaces of an identity. A common name never matches a pin, nor a pin a
// common name, however either is spelt: a certificate whose common name reads
// "spki:sha256/..." is a common name, and gets no pin's role.
const (
	// CNPrefix starts an identity naming a client certificate's subject common name
	// ("cn:alice"). A bare name is a common name too.
	CNPrefix = "cn:"
	// SPKIPrefix starts an identity that pins a client certificate's public key:
	// "spki:sha256/" followed by the standard base64 of the SHA-256 of its DER
	// SubjectPublicKeyInfo (controlplane.SPKIPin computes it).
	SPKIPrefix = "spki:sha256/"
)

// Identity is one parsed client identity: a common name, or a pin.
type Identity struct {
	CN  string
	Pin [sha256.Size]byte
	// IsPin tells which of the two it is.
	IsPin bool
}

// Canonical is the identity's one spelling ("cn:NAME" or "spki:sha256/BASE64").
func (id Identity) Canonical() string {
	if id.IsPin {
		return SPKIPrefix + base64.StdEncoding.EncodeToString(id.Pin[:])
	}
	return CNPrefix + id.CN
}

// ParseIdentity parses a client identity. Prefixes are case-insensitive; a pin must
// be the standard base64 of 32 bytes. What could be meant as a pin or another
// namespace but is not well formed is refused rather than taken as a common name: a
// leading or trailing space, a control character, a bare "sha256/...", an unknown
// "word:".
func ParseIdentity(name string) (Identity, error) {
	bad := func(why string) (Identity, error) {
		return Identity{}, fmt.Errorf("client identity %q: %s", name, why)
	}
	if strings.TrimSpace(name) != name {
		return bad("leading or trailing white space")
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name) {
		return bad("a control character or invalid UTF-8")
	}
	ns, rest, hasNS := strings.Cut(name, ":")
	switch {
	case hasNS && strings.EqualFold(ns, "cn"):
		if rest == "" || strings.TrimSpace(rest) != rest {
			return bad("want cn:NAME, NAME not empty nor padded with white space")
		}
		return Identity{CN: rest}, nil
	case hasNS && strings.EqualFold(ns, "spki"):
		b64, ok := cutPrefixFold(rest, "sha256/")
		sum, err := base64.StdEncoding.Strict().DecodeString(b64)
		if !ok || err != nil || len(sum) != sha256.Size {
			return bad("not " + SPKIPrefix + "BASE64 of a 32-byte SHA-256")
		}
		id := Identity{IsPin: true}
		copy(id.Pin[:], sum)
		return id, nil
	case hasNS && isWord(ns):
		return bad("unknown namespace " + ns + ": (want cn:NAME or " + SPKIPrefix + "BASE64; write cn:" + name + " for a common name with a colon)")
	}
	if _, ok := cutPrefixFold(name, "sha256/"); ok {
		return bad("a pin needs the " + SPKIPrefix + " prefix (write cn:" + name + " for a common name)")
	}
	if name == "" {
		return bad("empty")
	}
	return Identity{CN: name}, nil
}

// Parse parses one NAME=ROLE grant (the form of `adapterctl serve --allow`): NAME
// is an identity ([ParseIdentity]), ROLE one of Read, Logs and Call. The last "="
// separates them (a base64 pin may end in "="). The name is returned in its
// canonical spelling, so that two spellings of one identity compare equal.
func Parse(s string) (name, role string, err error) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("%q is not NAME=ROLE", s)
	}
	id, err := ParseIdentity(s[:i])
	if err != nil {
		return "", "", err
	}
	if role = s[i+1:]; !KnownRole(role) {
		return "", "", fmt.Errorf("role %q: want %s, %s or %s", role, Read, Logs, Call)
	}
	return id.Canonical(), role, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// isWord reports whether s could name a namespace: letters, digits and '-' only.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
