package proto

import (
	"errors"
	"fmt"
	"strings"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/wire"
)

// MethodInitialize is the method of the handshake request, always id 1 (R17).
const MethodInitialize = "system.adapter.initialize"

// ErrInvalidCatalog is the cause of every *CatalogError (R26).
var ErrInvalidCatalog = errors.New("invalid catalog")

// CatalogError says which rule a catalog breaks and where.
type CatalogError struct {
	Rule    string // the rule broken, e.g. "R21"
	Service string // the service concerned, if any
	Method  string // the method concerned, if any
	Reason  string
}

func (e *CatalogError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wire: invalid catalog (%s): %s", e.Rule, e.Reason)
	if e.Service != "" {
		fmt.Fprintf(&b, "; service %q", e.Service)
	}
	if e.Method != "" {
		fmt.Fprintf(&b, "; method %q", e.Method)
	}
	return b.String()
}

// Unwrap returns ErrInvalidCatalog.
func (e *CatalogError) Unwrap() error { return ErrInvalidCatalog }

// dotted reports whether s has at least two non-empty dot-separated segments (A9).
func dotted(s string) bool {
	if !strings.Contains(s, ".") {
		return false
	}
	for seg := range strings.SplitSeq(s, ".") {
		if seg == "" {
			return false
		}
	}
	return true
}

// ValidateName checks one service id or method name against R20 and R21: dotted and
// namespaced, and not `system` nor starting with it (a literal, case-sensitive prefix,
// A10). It returns a *CatalogError.
func ValidateName(name string) error {
	switch {
	case strings.HasPrefix(name, "system"):
		return &CatalogError{Rule: "R21", Reason: "identifier is or starts with system", Method: name}
	case !dotted(name):
		return &CatalogError{Rule: "R20", Reason: "identifier is not dotted and namespaced", Method: name}
	}
	return nil
}

// ValidateCatalog checks the catalog against every rule of the specification (R19-R25, and a
// protocol other than 1 per A8). It returns nil or a *CatalogError naming the rule.
// An empty services list is valid (A12).
func ValidateCatalog(c *wire.Catalog) error {
	if c == nil {
		return &CatalogError{Rule: "R19", Reason: "no catalog"}
	}
	if c.Protocol != limits.ProtocolVersion {
		return &CatalogError{Rule: "R19", Reason: fmt.Sprintf("protocol %d, want %d", c.Protocol, limits.ProtocolVersion)}
	}
	services := make(map[string]bool, len(c.Services))
	methods := make(map[string]bool)
	for _, s := range c.Services {
		if err := ValidateName(s.ID); err != nil {
			ce := err.(*CatalogError)
			ce.Service, ce.Method = s.ID, ""
			ce.Reason = "service " + ce.Reason
			return ce
		}
		if services[s.ID] {
			return &CatalogError{Rule: "R25", Service: s.ID, Reason: "service id duplicated"}
		}
		services[s.ID] = true
		if s.Version < 1 {
			return &CatalogError{Rule: "R22", Service: s.ID, Reason: fmt.Sprintf("version %d is below 1", s.Version)}
		}
		if len(s.Methods) == 0 {
			return &CatalogError{Rule: "R23", Service: s.ID, Reason: "method list is empty"}
		}
		for _, m := range s.Methods {
			if err := ValidateName(m); err != nil {
				ce := err.(*CatalogError)
				ce.Service = s.ID
				ce.Reason = "method " + ce.Reason
				return ce
			}
			if !strings.HasPrefix(m, s.ID+".") {
				return &CatalogError{Rule: "R24", Service: s.ID, Method: m, Reason: "method is not prefixed with its service id and a dot"}
			}
			if methods[m] {
				return &CatalogError{Rule: "R25", Service: s.ID, Method: m, Reason: "method name duplicated"}
			}
			methods[m] = true
		}
	}
	return nil
}

// Methods returns the set of every method the catalog advertises.
func Methods(c *wire.Catalog) map[string]bool {
	set := make(map[string]bool)
	for _, s := range c.Services {
		for _, m := range s.Methods {
			set[m] = true
		}
	}
	return set
}
