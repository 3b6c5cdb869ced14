package discovery

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/internal/sentinel"
)

// Ref names an adapter and, optionally, which versions are acceptable.
type Ref struct {
	Name string
	// Constraints the version must meet; nil means any version.
	Constraints version.Constraints
	// Raw is the string ParseRef was given.
	Raw string
}

// String returns Raw when set, otherwise NAME[@CONSTRAINTS].
func (r Ref) String() string {
	if r.Raw != "" {
		return r.Raw
	}
	if r.Constraints == nil {
		return r.Name
	}
	return r.Name + "@" + r.Constraints.String()
}

// Errors ParseRef reports, always inside a *RefError.
var (
	ErrRefName       = errors.New("invalid adapter name")
	ErrRefConstraint = errors.New("invalid version constraint")
)

// RefError reports a string ParseRef cannot parse.
type RefError struct {
	Raw    string // the input
	Reason error  // ErrRefName or ErrRefConstraint
	Err    error  // the go-version parse error for a bad constraint, or nil
	// Suggestion is the reference probably meant, or "": for a file name
	// "inventory_v1.0.0", the reference "inventory@1.0.0".
	Suggestion string
}

// Error implements error.
func (e *RefError) Error() string {
	s := "discovery: adapter reference " + strconv.Quote(e.Raw) + ": " + e.Reason.Error()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Suggestion != "" {
		s += " (a reference is NAME or NAME@VERSION: did you mean " + strconv.Quote(e.Suggestion) + "?)"
	}
	return s
}

// suggestRef returns the reference a file name NAME_vVERSION[.exe] stands for, or "".
func suggestRef(s string) string {
	stem, _ := cutExe(s)
	name, ver, found := strings.Cut(stem, versionSep)
	if !found || !ValidName(name) {
		return ""
	}
	if _, err := ParseVersion(ver); err != nil {
		return ""
	}
	return name + "@" + ver
}

// Unwrap returns the Reason and the underlying error.
func (e *RefError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// ParseRef parses "NAME" (any version) or "NAME@CONSTRAINTS", where NAME
// follows the NAME rule and CONSTRAINTS is a non-empty, comma-separated
// go-version constraint list: "thermo", "thermo@~> 1.2", "x@>= 2, < 3",
// "x@1.4.0" (exactly 1.4.0). The string is split at its first '@'.
func ParseRef(s string) (Ref, error) {
	name, cons, hasCons := strings.Cut(s, "@")
	if !ValidName(name) {
		return Ref{}, &RefError{Raw: s, Reason: ErrRefName,
			Err:        fmt.Errorf("%q must be 1-%d of [a-z0-9-], not starting with '-'", name, MaxNameLen),
			Suggestion: suggestRef(s)}
	}
	ref := Ref{Name: name, Raw: s}
	if !hasCons {
		return ref, nil
	}
	if strings.TrimSpace(cons) == "" {
		return Ref{}, &RefError{Raw: s, Reason: ErrRefConstraint, Err: errors.New("empty constraint after '@'")}
	}
	c, err := version.NewConstraint(cons)
	if err != nil {
		return Ref{}, &RefError{Raw: s, Reason: ErrRefConstraint, Err: err}
	}
	ref.Constraints = c
	return ref, nil
}

// SelectOptions adjusts Select. A nil *SelectOptions is valid.
type SelectOptions struct {
	// Prerelease makes pre-release versions eligible when their release
	// (MAJOR.MINOR.PATCH) satisfies the constraints.
	Prerelease bool
}

// Errors Select reports, always inside a *NotFoundError.
var (
	// ErrNotFound: no adapter with the name was found at all (platform.ErrNotFound
	// is the same value).
	ErrNotFound = sentinel.NotFound
	// ErrNoMatchingVersion: the name exists, but no version is eligible.
	ErrNoMatchingVersion = errors.New("no version of the adapter matches")
)

// NotFoundError reports a Ref that Select cannot satisfy.
type NotFoundError struct {
	Ref Ref
	// Candidates: for ErrNotFound, the names found (sorted); for
	// ErrNoMatchingVersion, the versions found for the name (newest first).
	Candidates []string
	Err        error // ErrNotFound or ErrNoMatchingVersion
	// Rejected holds every file of the scanned directories that was not taken
	// as an adapter, with its reason (as in Result.Rejected): the answer to "but
	// the file is there". Error names those that look like the adapter sought.
	Rejected []Rejected
}

// maxRejectedNamed bounds how many rejected files Error names when none looks
// like the adapter sought.
const maxRejectedNamed = 3

// Error implements error. Besides what was found, it names the rejected files
// whose name is the adapter's (NAME_v..., NAME), each with why it was not
// taken; when there are none it names a few other rejected files.
func (e *NotFoundError) Error() string {
	what := "names"
	if errors.Is(e.Err, ErrNoMatchingVersion) {
		what = "versions"
	}
	reason := e.Err.Error()
	if errors.Is(e.Err, ErrNotFound) {
		reason = "no adapter with that name"
	}
	found := "none"
	if len(e.Candidates) > 0 {
		found = strings.Join(e.Candidates, ", ")
	}
	s := "discovery: " + strconv.Quote(e.Ref.String()) + ": " + reason + " (" + what + " found: " + found + ")"
	mine := e.RejectedFor()
	switch {
	case len(mine) > 0:
		s += "; not taken: " + describeRejected(mine)
	case len(e.Rejected) > 0:
		shown := e.Rejected[:min(len(e.Rejected), maxRejectedNamed)]
		s += "; other files not taken: " + describeRejected(shown)
		if more := len(e.Rejected) - len(shown); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
	}
	return s
}

// RejectedFor returns the rejected files whose name is the adapter sought:
// NAME_v..., NAME or NAME.exe.
func (e *NotFoundError) RejectedFor() []Rejected {
	var out []Rejected
	for _, r := range e.Rejected {
		base, _ := cutExe(filepath.Base(r.Path))
		if base == e.Ref.Name || strings.HasPrefix(base, e.Ref.Name+versionSep) {
			out = append(out, r)
		}
	}
	return out
}

// describeRejected lists rejected files as "PATH (reason: detail)".
func describeRejected(rs []Rejected) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		why := r.Reason.String()
		if r.Detail != "" {
			why += ": " + r.Detail
		}
		parts[i] = r.Path + " (" + why + ")"
	}
	return strings.Join(parts, ", ")
}

// Unwrap returns ErrNotFound or ErrNoMatchingVersion.
func (e *NotFoundError) Unwrap() error { return e.Err }

// Lookup returns every adapter named name, newest version first, or nil. The
// slice is a copy. A nil *Result has no adapters.
func (r *Result) Lookup(name string) []Adapter {
	if r == nil {
		return nil
	}
	var out []Adapter
	for _, a := range r.Adapters {
		if a.Name == name {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, compareAdapters)
	return out
}

// Select returns the newest adapter named ref.Name whose version is eligible:
//
//   - a release version is eligible when it satisfies ref.Constraints (always,
//     when they are nil);
//   - a pre-release version is eligible when at least one of ref.Constraints
//     names a pre-release and go-version's Check accepts the version (its
//     ordering constraints then accept a pre-release only if they name a
//     pre-release of the same MAJOR.MINOR.PATCH: ">= 1.2.5-alpha, < 1.2.5"
//     matches no 1.2.5-rc.1, ">= 1.2.5-alpha, < 1.2.5-z" does), or when
//     opts.Prerelease is set and its release MAJOR.MINOR.PATCH satisfies the
//     constraints (with ">= 2, < 3", 2.1.0-rc.1 qualifies, 3.0.0-rc.1 not).
//
// Otherwise it returns a *NotFoundError wrapping ErrNotFound (no such name) or
// ErrNoMatchingVersion (the name exists).
func (r *Result) Select(ref Ref, opts *SelectOptions) (Adapter, error) {
	same := r.Lookup(ref.Name)
	if len(same) == 0 {
		return Adapter{}, &NotFoundError{Ref: ref, Candidates: r.names(), Err: ErrNotFound, Rejected: r.rejected()}
	}
	pre := opts != nil && opts.Prerelease
	for _, a := range same {
		if eligible(ref.Constraints, a.Version, pre) {
			return a, nil
		}
	}
	vs := make([]string, len(same))
	for i, a := range same {
		vs[i] = a.Version.String()
	}
	return Adapter{}, &NotFoundError{Ref: ref, Candidates: vs, Err: ErrNoMatchingVersion, Rejected: r.rejected()}
}

func eligible(cs version.Constraints, v *version.Version, pre bool) bool {
	if v.Prerelease() == "" {
		return cs.Check(v)
	}
	if namesPrerelease(cs) && cs.Check(v) {
		return true
	}
	return pre && cs.Check(v.Core())
}

func namesPrerelease(cs version.Constraints) bool {
	for _, c := range cs {
		if c.Prerelease() {
			return true
		}
	}
	return false
}

// names returns the distinct adapter names in r, sorted.
func (r *Result) names() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.Adapters))
	for _, a := range r.Adapters {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rejected returns a copy of r's rejected files.
func (r *Result) rejected() []Rejected {
	if r == nil {
		return nil
	}
	return slices.Clone(r.Rejected)
}
