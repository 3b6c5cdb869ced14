package controlplane

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strings"
)

// Role is what a remote client may do, granted by RemoteConfig.Allow.
type Role string

// The roles of remote clients. A client on the Unix socket (the daemon's own user)
// is not given a role: it keeps every permission.
const (
	// RoleRead may call Ping, Version, Capabilities, Discover and Status.
	RoleRead Role = "read"
	// RoleCall may also call Send and Upgrade.
	RoleCall Role = "call"
)

// SPKIPrefix starts an identity that pins a client certificate's public key:
// "spki:sha256/" followed by the standard base64 of the SHA-256 of its DER
// SubjectPublicKeyInfo ([SPKIPin] computes it).
const SPKIPrefix = "spki:sha256/"

// SPKIPin returns the "spki:sha256/BASE64" identity of cert's public key.
func SPKIPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return SPKIPrefix + base64.StdEncoding.EncodeToString(sum[:])
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
	case MethodPing, MethodVersion, MethodCapabilities, MethodDiscover, MethodStatus:
		return p.role == RoleRead || p.role == RoleCall
	case MethodSend, MethodUpgrade:
		return p.role == RoleCall
	}
	return true
}

// deny is the permission_denied answer to a method the role does not allow.
func (p perms) deny(method string) *Error {
	return newError(CodePermissionDenied, map[string]any{"method": method, "role": p.role, "client": p.identity},
		"client %s has role %s, which may not call %s", p.identity, p.role, method)
}

// checkAllow validates RemoteConfig.Allow: known roles, and identities that are a
// non-empty common name or a well-formed SPKI pin.
func checkAllow(allow map[string]Role) error {
	if len(allow) == 0 {
		return fmt.Errorf("%w: remote: no client is allowed (Allow is empty): every client would be refused", ErrConfig)
	}
	for name, role := range allow {
		if role != RoleRead && role != RoleCall {
			return fmt.Errorf("%w: remote: %q has role %q: want %q or %q", ErrConfig, name, role, RoleRead, RoleCall)
		}
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("%w: remote: an empty client name", ErrConfig)
		}
		if pin, ok := strings.CutPrefix(name, "spki:"); ok {
			b64, ok := strings.CutPrefix(pin, "sha256/")
			sum, err := base64.StdEncoding.DecodeString(b64)
			if !ok || err != nil || len(sum) != sha256.Size {
				return fmt.Errorf("%w: remote: %q is not %sBASE64 of a 32-byte SHA-256", ErrConfig, name, SPKIPrefix)
			}
		}
	}
	return nil
}

// ParseAllow parses one NAME=ROLE grant (the form of `adapterctl serve --allow`):
// NAME is a certificate's subject common name or an SPKI pin ("spki:sha256/BASE64"),
// ROLE is read or call. The last "=" separates them (a base64 pin may end in "=").
func ParseAllow(s string) (name string, role Role, err error) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("%w: %q is not NAME=ROLE", ErrConfig, s)
	}
	name, role = s[:i], Role(s[i+1:])
	if err := checkAllow(map[string]Role{name: role}); err != nil {
		return "", "", err
	}
	return name, role, nil
}

// grant returns the role of a verified client certificate, and the identity it is
// known by (its pin wins over its common name), or ok false when no grant names it.
func grant(allow map[string]Role, leaf *x509.Certificate) (p perms, ok bool) {
	pin := SPKIPin(leaf)
	if r, found := allow[pin]; found {
		return perms{role: r, identity: describeCert(leaf)}, true
	}
	if cn := leaf.Subject.CommonName; cn != "" {
		if r, found := allow[cn]; found {
			return perms{role: r, identity: describeCert(leaf)}, true
		}
	}
	return perms{}, false
}

// describeCert names a client certificate in logs and errors: its common name (if
// any) and its SPKI pin.
func describeCert(c *x509.Certificate) string {
	if c.Subject.CommonName == "" {
		return SPKIPin(c)
	}
	return fmt.Sprintf("CN=%s (%s)", c.Subject.CommonName, SPKIPin(c))
}
