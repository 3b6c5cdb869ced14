package controlplane

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Role is what a remote client may do, granted by RemoteConfig.Allow.
type Role string

// The roles of remote clients. A client on the Unix socket (the daemon's own user)
// is not given a role: it keeps every permission.
const (
	// RoleRead may call Ping, Version, Capabilities, Discover and Status; its
	// Status carries no adapter's log_tail (adapter standard error often holds
	// tokens or other callers' data).
	RoleRead Role = "read"
	// RoleLogs may call what RoleRead may, and its Status carries the log tails.
	RoleLogs Role = "logs"
	// RoleCall may do everything: what RoleLogs may, Send and Upgrade.
	RoleCall Role = "call"
)

// SPKIPin returns the "spki:sha256/BASE64" identity of cert's public key.
func SPKIPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return spkiPrefix + base64.StdEncoding.EncodeToString(sum[:])
}

// perms is what one connection may do.
type perms struct {
	owner    bool   // the Unix-socket owner: everything
	role     Role   // a remote client's role
	identity string // how the client is named in logs ("" for the owner)
}

// ownerPerms are the permissions of a Unix-socket client.
var ownerPerms = perms{owner: true}

// allows reports whether method may be called. Methods outside the schema are
// allowed here, so they are answered unknown_method whatever the role.
func (p perms) allows(method string) bool {
	if p.owner {
		return true
	}
	switch method {
	case methodPing, methodVersion, methodCapabilities, methodDiscover, methodStatus:
		return p.role == RoleRead || p.role == RoleLogs || p.role == RoleCall
	case methodSend, methodUpgrade:
		return p.role == RoleCall
	}
	return true
}

// seesLogs reports whether the client may read the adapters' standard error tails.
func (p perms) seesLogs() bool {
	return p.owner || p.role == RoleLogs || p.role == RoleCall
}

// deny is the permission_denied answer to a method the role does not allow.
func (p perms) deny(method string) *Error {
	return newError(CodePermissionDenied, map[string]any{"method": method, "role": p.role, "client": p.identity},
		"client %s has role %s, which may not call %s", p.identity, p.role, method)
}

// The namespaces of an identity in RemoteConfig.Allow. A common name never matches
// a pin, nor a pin a common name, however either is spelt: a certificate whose
// common name reads "spki:sha256/..." is a common name, and gets no pin's role.
const (
	// cnPrefix starts an identity naming a client certificate's subject common name
	// ("cn:alice"). A bare name is a common name too.
	cnPrefix = "cn:"
	// spkiPrefix starts an identity that pins a client certificate's public key:
	// "spki:sha256/" followed by the standard base64 of the SHA-256 of its DER
	// SubjectPublicKeyInfo ([SPKIPin] computes it).
	spkiPrefix = "spki:sha256/"
)

// identity is one parsed Allow key: a common name, or a pin.
type identity struct {
	cn  string
	pin [sha256.Size]byte
	// isPin tells which of the two it is.
	isPin bool
}

// canonical is the identity's one spelling ("cn:NAME" or "spki:sha256/BASE64").
func (id identity) canonical() string {
	if id.isPin {
		return spkiPrefix + base64.StdEncoding.EncodeToString(id.pin[:])
	}
	return cnPrefix + id.cn
}

// parseIdentity parses an Allow key. Prefixes are case-insensitive; a pin must be
// the standard base64 of 32 bytes. What could be meant as a pin or another namespace
// but is not well formed is refused rather than taken as a common name: a leading or
// trailing space, a control character, a bare "sha256/...", an unknown "word:".
func parseIdentity(name string) (identity, error) {
	bad := func(why string) (identity, error) {
		return identity{}, fmt.Errorf("%w: remote: client identity %q: %s", ErrConfig, name, why)
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
		return identity{cn: rest}, nil
	case hasNS && strings.EqualFold(ns, "spki"):
		b64, ok := cutPrefixFold(rest, "sha256/")
		sum, err := base64.StdEncoding.Strict().DecodeString(b64)
		if !ok || err != nil || len(sum) != sha256.Size {
			return bad("not " + spkiPrefix + "BASE64 of a 32-byte SHA-256")
		}
		id := identity{isPin: true}
		copy(id.pin[:], sum)
		return id, nil
	case hasNS && isWord(ns):
		return bad("unknown namespace " + ns + ": (want cn:NAME or " + spkiPrefix + "BASE64; write cn:" + name + " for a common name with a colon)")
	}
	if _, ok := cutPrefixFold(name, "sha256/"); ok {
		return bad("a pin needs the " + spkiPrefix + " prefix (write cn:" + name + " for a common name)")
	}
	if name == "" {
		return bad("empty")
	}
	return identity{cn: name}, nil
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

// allowList is RemoteConfig.Allow parsed: common names and pins apart.
type allowList struct {
	cn  map[string]Role
	pin map[[sha256.Size]byte]Role
}

// parseAllow validates RemoteConfig.Allow: known roles, well-formed identities, and
// no identity granted two roles under two spellings.
func parseAllow(allow map[string]Role) (*allowList, error) {
	if len(allow) == 0 {
		return nil, fmt.Errorf("%w: remote: no client is allowed (Allow is empty): every client would be refused", ErrConfig)
	}
	l := &allowList{cn: make(map[string]Role), pin: make(map[[sha256.Size]byte]Role)}
	seen := make(map[string]Role, len(allow))
	for name, role := range allow {
		if role != RoleRead && role != RoleLogs && role != RoleCall {
			return nil, fmt.Errorf("%w: remote: %q has role %q: want %q, %q or %q", ErrConfig, name, role, RoleRead, RoleLogs, RoleCall)
		}
		id, err := parseIdentity(name)
		if err != nil {
			return nil, err
		}
		key := id.canonical()
		if prev, dup := seen[key]; dup && prev != role {
			return nil, fmt.Errorf("%w: remote: %s is granted both %s and %s", ErrConfig, key, prev, role)
		}
		seen[key] = role
		if id.isPin {
			l.pin[id.pin] = role
		} else {
			l.cn[id.cn] = role
		}
	}
	return l, nil
}

// ParseAllow parses one NAME=ROLE grant (the form of `adapterctl serve --allow`):
// NAME is a certificate's subject common name ("cn:NAME", or a bare NAME) or an SPKI
// pin ("spki:sha256/BASE64"), prefixes in any case; ROLE is read, logs or call. The
// last "=" separates them (a base64 pin may end in "="). The name is returned in its
// canonical spelling ("cn:NAME" or "spki:sha256/BASE64"), so that two spellings of
// one identity compare equal.
func ParseAllow(s string) (name string, role Role, err error) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("%w: %q is not NAME=ROLE", ErrConfig, s)
	}
	role = Role(s[i+1:])
	id, err := parseIdentity(s[:i])
	if err != nil {
		return "", "", err
	}
	if _, err := parseAllow(map[string]Role{s[:i]: role}); err != nil {
		return "", "", err
	}
	return id.canonical(), role, nil
}

// oidCommonName is the X.509 attribute type of a common name.
var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// commonNames returns every common name attribute of a certificate's subject
// (crypto/x509 keeps only the last in Subject.CommonName).
func commonNames(c *x509.Certificate) []string {
	var cns []string
	for _, atv := range c.Subject.Names {
		if atv.Type.Equal(oidCommonName) {
			s, _ := atv.Value.(string)
			cns = append(cns, s)
		}
	}
	return cns
}

// grant returns the role of a verified client certificate, and the identity it is
// known by (a pin wins over a common name), or ok false when no grant names it. A
// common name is looked up among common names only, a pin among pins only.
func (l *allowList) grant(leaf *x509.Certificate) (p perms, ok bool) {
	if r, found := l.pin[sha256.Sum256(leaf.RawSubjectPublicKeyInfo)]; found {
		return perms{role: r, identity: describeCert(leaf)}, true
	}
	if cn := leaf.Subject.CommonName; cn != "" {
		if r, found := l.cn[cn]; found {
			return perms{role: r, identity: describeCert(leaf)}, true
		}
	}
	return perms{}, false
}

// describeCert names a verified client certificate in logs and errors: its common
// name (if any), quoted with Go's escapes so that no byte of it can forge a log
// record, and its SPKI pin.
func describeCert(c *x509.Certificate) string {
	if c.Subject.CommonName == "" {
		return SPKIPin(c)
	}
	return fmt.Sprintf("CN=%q (%s)", c.Subject.CommonName, SPKIPin(c))
}

// describeUnverified names a certificate whose chain has not been verified: what it
// claims, quoted, is nobody's proven identity.
func describeUnverified(c *x509.Certificate) string {
	cns := commonNames(c)
	if len(cns) == 0 {
		return "unverified certificate claiming no common name"
	}
	q := make([]string, len(cns))
	for i, cn := range cns {
		q[i] = "CN=" + strconv.Quote(cn)
	}
	return "unverified certificate claiming " + strings.Join(q, ", ")
}
