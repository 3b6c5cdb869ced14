package discovery

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"
)

// maxNameLen is the longest adapter NAME accepted, in bytes.
const maxNameLen = 64

// exeSuffix is the extension an adapter file carries on Windows and must not
// carry anywhere else. It is compared case-insensitively, as Windows does.
const exeSuffix = ".exe"

// versionSep separates NAME from VERSION in a file name.
const versionSep = "_v"

var (
	// nameRE is the NAME rule: a lower-case letter or digit, then lower-case
	// letters, digits and '-', at most maxNameLen bytes in all.
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

	// semverRE is SemVer 2.0.0: MAJOR.MINOR.PATCH without leading zeros, an
	// optional -PRERELEASE (dot-separated identifiers, numeric ones without
	// leading zeros) and an optional +BUILD.
	semverRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
		`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
		`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// validName reports whether s is a valid adapter NAME: 1 to maxNameLen bytes,
// the first a lower-case ASCII letter or digit, the rest lower-case ASCII
// letters, digits or '-'.
func validName(s string) bool {
	return len(s) <= maxNameLen && nameRE.MatchString(s)
}

// parseVersion parses a VERSION as it appears in an adapter file name: strict
// SemVer 2.0.0 (no "v" prefix, exactly three numeric parts, no leading zeros),
// which github.com/hashicorp/go-version must also accept.
func parseVersion(s string) (*version.Version, error) {
	if !semverRE.MatchString(s) {
		return nil, fmt.Errorf("%q is not a semantic version MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]", s)
	}
	v, err := version.NewSemver(s)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ParseFileName applies the naming convention to base, the last element of a
// path, for the operating system goos ("" means runtime.GOOS). It returns the
// adapter's NAME and VERSION, or a *Rejected (with Path set to base) whose
// Reason is BadName, BadVersion or WrongOSExtension.
//
// A case-insensitive ".exe" suffix is always taken as an extension, never as
// part of the version's build metadata; the remaining stem is parsed first, so
// WrongOSExtension is reported only for a stem that is otherwise a valid
// NAME_vVERSION.
func ParseFileName(base, goos string) (string, *version.Version, error) {
	goos = targetOS(goos)
	stem, hasExe := cutExe(base)
	name, ver, found := strings.Cut(stem, versionSep)
	if !found {
		return "", nil, &Rejected{Path: base, Reason: BadName, Detail: "no \"" + versionSep + "\" between NAME and VERSION"}
	}
	if !validName(name) {
		return "", nil, &Rejected{Path: base, Reason: BadName,
			Detail: fmt.Sprintf("NAME %q must be 1-%d of [a-z0-9-], not starting with '-'", name, maxNameLen)}
	}
	v, err := parseVersion(ver)
	if err != nil {
		return "", nil, &Rejected{Path: base, Reason: BadVersion, Detail: err.Error(), Err: err}
	}
	if want := goos == "windows"; hasExe != want {
		detail := "an adapter for " + goos + " must not end in " + exeSuffix
		if want {
			detail = "an adapter for windows must end in " + exeSuffix
		}
		return "", nil, &Rejected{Path: base, Reason: WrongOSExtension, Detail: detail}
	}
	return name, v, nil
}

// fileName is the inverse of ParseFileName: the file name under which an
// adapter NAME at version v is found on goos ("" means runtime.GOOS). The
// version is written in its canonical form (v.String()); an invalid name or a
// version that is not strict SemVer is an error (*Rejected with BadName or
// BadVersion).
func fileName(name string, v *version.Version, goos string) (string, error) {
	if !validName(name) {
		return "", &Rejected{Path: name, Reason: BadName, Detail: fmt.Sprintf("NAME %q is not valid", name)}
	}
	if v == nil {
		return "", &Rejected{Path: name, Reason: BadVersion, Detail: "nil version"}
	}
	s := v.String()
	if _, err := parseVersion(s); err != nil {
		return "", &Rejected{Path: name + versionSep + s, Reason: BadVersion, Detail: err.Error(), Err: err}
	}
	base := name + versionSep + s
	if targetOS(goos) == "windows" {
		base += exeSuffix
	}
	return base, nil
}

// cutExe removes a case-insensitive ".exe" suffix from base.
func cutExe(base string) (string, bool) {
	n := len(base) - len(exeSuffix)
	if n >= 0 && strings.EqualFold(base[n:], exeSuffix) {
		return base[:n], true
	}
	return base, false
}
