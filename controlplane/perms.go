package controlplane

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/internal/grant"
)

// Role is what a remote client may do, granted by RemoteConfig.Allow.
type Role string

// The roles of remote clients. A client on the Unix socket (the daemon's own user)
// is not given a role: it keeps every permission.
const (
	// RoleRead may call Ping, Version, Capabilities, Discover and Status; its
	// Status carries no adapter's log_tail (adapter standard error often holds
	// tokens or other callers' data).
	RoleRead Role = grant.Read
	// RoleLogs may call what RoleRead may, and its Status carries the log tails.
	RoleLogs Role = grant.Logs
	// RoleCall may do everything: what RoleLogs may, Send and Upgrade.
	RoleCall Role = grant.Call
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

// spkiPrefix starts the identity that pins a client certificate's public key.
const spkiPrefix = grant.SPKIPrefix

// parseIdentity parses an Allow key (grant.ParseIdentity); its error is an ErrConfig.
func parseIdentity(name string) (grant.Identity, error) {
	id, err := grant.ParseIdentity(name)
	if err != nil {
		return id, fmt.Errorf("%w: remote: %w", ErrConfig, err)
	}
	return id, nil
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
		if !grant.KnownRole(string(role)) {
			return nil, fmt.Errorf("%w: remote: %q has role %q: want %q, %q or %q", ErrConfig, name, role, RoleRead, RoleLogs, RoleCall)
		}
		id, err := parseIdentity(name)
		if err != nil {
			return nil, err
		}
		key := id.Canonical()
		if prev, dup := seen[key]; dup && prev != role {
			return nil, fmt.Errorf("%w: remote: %s is granted both %s and %s", ErrConfig, key, prev, role)
		}
		seen[key] = role
		if id.IsPin {
			l.pin[id.Pin] = role
		} else {
			l.cn[id.CN] = role
		}
	}
	return l, nil
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
