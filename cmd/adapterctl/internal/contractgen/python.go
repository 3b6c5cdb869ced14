package contractgen

import (
	"fmt"
	"regexp"
	"strings"
)

// Python: a dataclass per struct, each field with its Go zero value as default (None for
// what Go may send as null), annotated with the SDK's types (Int8 ... Uint64, Float32,
// Number), which the SDK checks at run time; other types are module-level aliases. The
// names the annotations use start with an underscore (typing as _t, the builtins as
// _str, _int ...), so that a field named like a type cannot hide it; a class named like
// a field of the file is given another name. Runs on Python 3.9.

var pyIdent = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

var pyKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`False None True and as assert async await break class continue def del elif else
		except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
		match case type`) {
		pyKeywords[k] = true
	}
}

var pyInts = map[string]string{"int8": "_ak.Int8", "int16": "_ak.Int16", "int32": "_ak.Int32", "int64": "_int",
	"uint8": "_ak.Uint8", "uint16": "_ak.Uint16", "uint32": "_ak.Uint32", "uint64": "_ak.Uint64"}

func (g *gen) python() error {
	fields := map[string]bool{}
	for _, n := range g.m.Types {
		for _, f := range n.Fields {
			if !pyIdent.MatchString(f.JSON) || pyKeywords[f.JSON] {
				return fmt.Errorf("%s: member %q is not a Python identifier: the Python SDK names a dataclass field as its member (give the Go field a json tag)", n.Doc, f.JSON)
			}
			fields[f.JSON] = true
		}
	}
	g.rename(func(s string) bool { return fields[s] || pyKeywords[s] })
	for _, l := range g.header() {
		g.p("# %s", l)
	}
	g.p("")
	g.p("from __future__ import annotations")
	g.p("")
	g.p("import dataclasses as _dc")
	g.p("import typing as _t")
	g.p("")
	g.p("import adapterkit as _ak")
	g.p("from adapterkit.contract import Method as _Method")
	g.p("")
	g.p("# The builtins by names no field can hide.")
	g.p("_bool = bool")
	g.p("_int = int")
	g.p("_float = float")
	g.p("_str = str")
	g.p("_bytes = bytes")
	for _, s := range g.m.Services {
		c := constName(s.ID)
		g.p("")
		g.p("#: The id and version of service %s.", s.ID)
		g.p("%s_ID = %q", c, s.ID)
		g.p("%s_VERSION = %d", c, s.Version)
	}
	for _, n := range g.m.Types {
		if !n.Struct {
			continue
		}
		g.p("")
		g.p("")
		g.p("@_dc.dataclass")
		g.p("class %s:", g.names[n.Name])
		g.p(`    """%s."""`, upperFirst(n.Doc))
		if len(n.Fields) > 0 {
			g.p("")
		}
		for _, f := range n.Fields {
			g.p("    %s: %s = %s", f.JSON, g.pyType(f.Type, nil), g.pyDefault(f.Type))
		}
	}
	// The other named types, each after those it names (a cycle by a quoted name).
	visiting, emitted := map[string]bool{}, map[string]bool{}
	var emit func(n *Named)
	emit = func(n *Named) {
		if n.Struct || visiting[n.Name] {
			return
		}
		visiting[n.Name] = true
		refs(n.Alias, func(name string) {
			if r := g.m.Lookup(name); !r.Struct {
				emit(r)
			}
		})
		g.p("")
		g.p("#: %s.", upperFirst(n.Doc))
		g.p("%s = %s", g.names[n.Name], g.pyType(n.Alias, emitted))
		emitted[n.Name] = true
	}
	g.p("")
	for _, n := range g.m.Types {
		emit(n)
	}
	for _, s := range g.m.Services {
		for _, m := range s.Methods {
			p, r := g.names[m.Params], g.names[m.Result]
			g.p("")
			g.p("#: %s: register its handler with adapterkit.contract.implement(service, %s, handler).", m.Name, m.Ident)
			g.p("%s: _Method[%s, %s] = _Method(%q, %s, %s)", m.Ident, p, r, m.Name, p, r)
		}
	}
	return nil
}

// refs calls f with each name t refers to.
func refs(t *Type, f func(string)) {
	switch t.Kind {
	case Ref:
		f(t.Name)
	case List, Map:
		refs(t.Elem, f)
	}
}

// pyType is the annotation of t. In a module-level alias (defined non-nil: the
// non-struct names defined so far; the classes come first), a name not yet defined is
// quoted.
func (g *gen) pyType(t *Type, defined map[string]bool) string {
	var s string
	switch t.Kind {
	case Bool:
		s = "_bool"
	case Int:
		s = pyInts[t.Int]
	case Float:
		s = "_float"
		if t.Bits == 32 {
			s = "_ak.Float32"
		}
	case Number:
		s = "_ak.Number"
	case String:
		s = "_str"
	case Time:
		s = "_ak.Time"
	case Bytes:
		s = "_bytes"
	case List:
		s = "_t.List[" + g.pyType(t.Elem, defined) + "]"
	case Map:
		s = "_t.Dict[_str, " + g.pyType(t.Elem, defined) + "]"
	case Ref:
		s = g.names[t.Name]
		if defined != nil && !g.m.Lookup(t.Name).Struct && !defined[t.Name] {
			s = fmt.Sprintf("%q", s)
		}
	case Any:
		return "_t.Any"
	}
	if t.Nullable {
		s = "_t.Optional[" + s + "]"
	}
	return s
}

// pyDefault is the default of a field of type t: Go's zero value.
func (g *gen) pyDefault(t *Type) string {
	if t.Nullable || t.Kind == Any {
		return "None"
	}
	switch t.Kind {
	case Bool:
		return "False"
	case Int:
		if t.Int == "int64" {
			return "0"
		}
		return pyInts[t.Int] + "(0)"
	case Float:
		if t.Bits == 32 {
			return "_ak.Float32(0.0)"
		}
		return "0.0"
	case Number:
		return `_ak.Number("0")`
	case String:
		return `""`
	case Time:
		return `_ak.Time("` + zeroTime + `")`
	case List:
		return "_dc.field(default_factory=list)"
	case Ref:
		u, n := g.target(t)
		if n != nil {
			return "_dc.field(default_factory=lambda: " + g.names[n.Name] + "())"
		}
		if u.Kind == Ref {
			return "None"
		}
		return g.pyDefault(u)
	}
	return "None"
}
