package contractgen

import (
	"fmt"
	"strings"
	"unicode"
)

// Rust: a serde struct per struct, with #[serde(default)] and a Default of Go's zero
// values (a member left out, or null, is its field's zero value, as in Go); fields in
// snake case, renamed to their members. Option for what Go may send as null (Option<Box>
// for a named type), adapterkit::Bytes for []byte, adapterkit::Number for json.Number,
// serde_json::Value for any value. The SDK's decoder checks the params with the
// contract's rules; serde writes the result from its type. Paths are written in full,
// so that no generated name can hide another. Needs serde (derive) and serde_json.

var rustKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`as break const continue crate else enum extern false fn for if impl in let loop
		match mod move mut pub ref return self Self static struct super trait true type unsafe use where while async
		await dyn abstract become box do final macro override priv typeof unsized virtual yield try union`) {
		rustKeywords[k] = true
	}
}

const (
	rsString = "::std::string::String"
	rsOption = "::std::option::Option"
)

func (g *gen) rust() error {
	g.rename(func(s string) bool { return rustKeywords[s] })
	for _, l := range g.header() {
		g.p("//! %s", l)
	}
	g.p("#![allow(dead_code, clippy::all)]")
	for _, s := range g.m.Services {
		c := constName(s.ID)
		g.p("")
		g.p("/// The id of service %s.", s.ID)
		g.p("pub const %s_ID: &str = %q;", c, s.ID)
		g.p("/// The version of service %s.", s.ID)
		g.p("pub const %s_VERSION: i64 = %d;", c, s.Version)
	}
	const derive = "#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]"
	for _, n := range g.m.Types {
		name := g.names[n.Name]
		g.p("")
		g.p("/// %s.", upperFirst(n.Doc))
		switch {
		case n.Struct:
			// Every field's Default is Go's zero value (adapterkit::Time's is Go's zero
			// time), so the derived Default is the struct's zero value.
			g.p("%s", strings.Replace(derive, "Debug,", "Debug, Default,", 1))
			g.p("#[serde(default)]")
			g.p("pub struct %s {", name)
			fields := rustFields(n)
			for i, f := range n.Fields {
				if fields[i] != f.JSON {
					g.p("    #[serde(rename = %q)]", f.JSON)
				}
				g.p("    pub %s: %s,", fields[i], g.rsType(f.Type))
			}
			g.p("}")
		case g.recursive(n):
			g.p("%s", strings.Replace(derive, "Debug,", "Debug, Default,", 1))
			g.p("#[serde(transparent)]")
			g.p("pub struct %s(pub %s);", name, g.rsType(n.Alias))
		default:
			g.p("pub type %s = %s;", name, g.rsType(n.Alias))
		}
	}
	for _, s := range g.m.Services {
		for _, m := range s.Methods {
			g.p("")
			g.p("/// %s: register its handler with `service.implement(%s, handler)`.", m.Name, snakeUpper(m.Ident))
			g.p("pub const %s: adapterkit::Method<%s, %s> = adapterkit::Method::new(%q);",
				snakeUpper(m.Ident), g.names[m.Params], g.names[m.Result], m.Name)
		}
	}
	return nil
}

// rsType is the Rust type of t.
func (g *gen) rsType(t *Type) string {
	var s string
	switch t.Kind {
	case Bool:
		s = "bool"
	case Int:
		s = strings.NewReplacer("uint", "u", "int", "i").Replace(t.Int)
	case Float:
		s = fmt.Sprintf("f%d", t.Bits)
	case Number:
		s = "adapterkit::Number"
	case String:
		s = rsString
	case Time:
		s = "adapterkit::Time"
	case Bytes:
		s = "adapterkit::Bytes"
	case List:
		s = "::std::vec::Vec<" + g.rsType(t.Elem) + ">"
	case Map:
		s = "::std::collections::BTreeMap<" + rsString + ", " + g.rsType(t.Elem) + ">"
	case Ref:
		s = g.names[t.Name]
		if t.Nullable {
			s = "::std::boxed::Box<" + s + ">"
		}
	case Any:
		return "serde_json::Value"
	}
	if t.Nullable {
		s = rsOption + "<" + s + ">"
	}
	return s
}

// rustFields returns the Rust names of n's fields: snake case, unique, not keywords.
func rustFields(n *Named) []string {
	taken := map[string]bool{}
	var out []string
	for _, f := range n.Fields {
		name := snake(f.JSON)
		if name == "" || unicode.IsDigit(rune(name[0])) {
			name = "f_" + name
		}
		for rustKeywords[name] || taken[name] {
			name += "_"
		}
		taken[name] = true
		out = append(out, name)
	}
	return out
}

// snake turns a name into snake case: "atP" into "at_p", "NoTag" into "no_tag".
func snake(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, c := range s {
		switch {
		case c < unicode.MaxASCII && unicode.IsUpper(c):
			if prev != 0 && prev != '_' && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(c))
		case c < unicode.MaxASCII && (unicode.IsLower(c) || unicode.IsDigit(c)):
			b.WriteRune(c)
		default:
			c = '_'
			if prev == '_' {
				continue
			}
			b.WriteRune(c)
		}
		prev = c
	}
	return strings.Trim(b.String(), "_")
}

// snakeUpper turns a name into screaming snake case: "ReadMethod" into "READ_METHOD".
func snakeUpper(s string) string {
	return strings.ToUpper(snake(s))
}
