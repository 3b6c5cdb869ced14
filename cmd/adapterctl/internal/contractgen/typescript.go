package contractgen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// TypeScript: an interface (or a type) per named type, for the handler's static types,
// and a schema of the same name built with the SDK's t, which checks the params (and
// the result, through implement) at run time. A member left out takes its Go zero value
// (.default), a nullable one null (.nullable()), as the codec does; int64 and uint64 are
// number | bigint, as the SDK's decoder gives them (bigint beyond 2^53).

var tsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// tsTaken are the global names a generated type must not hide.
var tsTaken = map[string]bool{"Array": true, "Uint8Array": true, "Object": true, "String": true, "Number": true,
	"Boolean": true, "Promise": true, "Record": true, "Date": true, "Error": true, "Symbol": true, "BigInt": true}

func (g *gen) typescript() error {
	g.rename(func(s string) bool { return tsTaken[s] })
	for _, s := range g.m.Services {
		c := constName(s.ID)
		g.p("")
		g.p("/** The id of service %s. */", s.ID)
		g.p("export const %s_ID = %q;", c, s.ID)
		g.p("/** The version of service %s. */", s.ID)
		g.p("export const %s_VERSION = %d;", c, s.Version)
	}
	for _, n := range g.m.Types {
		name := g.names[n.Name]
		g.p("")
		g.p("/** %s. */", upperFirst(n.Doc))
		if n.Struct {
			g.p("export interface %s {", name)
			for _, f := range n.Fields {
				g.p("  %s: %s;", tsKey(f.JSON), g.tsType(f.Type))
			}
			g.p("}")
			g.p("/** The schema of %s. */", name)
			g.p("export const %s: _Schema<%s> = _t.object({", name, name)
			for _, f := range n.Fields {
				g.p("  %s: %s,", tsKey(f.JSON), g.tsField(f.Type))
			}
			g.p("});")
			continue
		}
		g.p("export type %s = %s;", name, g.tsType(n.Alias))
		g.p("/** The schema of %s. */", name)
		g.p("export const %s: _Schema<%s> = %s;", name, name, g.tsSchema(n.Alias))
	}
	for _, s := range g.m.Services {
		for _, m := range s.Methods {
			p, r := g.names[m.Params], g.names[m.Result]
			g.p("")
			g.p("/** %s: register its handler with implement(service, %s, handler). */", m.Name, m.Ident)
			g.p("export const %s: _Method<%s, %s> = _method(%q, %s, %s);", m.Ident, p, r, m.Name, p, r)
		}
	}
	// The imports the file uses, before it.
	body := g.b.String()
	g.b.Reset()
	for _, l := range g.header() {
		g.p("// %s", l)
	}
	g.p("")
	var values, types []string
	for _, u := range []struct{ name, use string }{{"JSONNumber", "_JSONNumber"}, {"lazy", "_lazy("}, {"method", "_method("}, {"t", "_t."}} {
		if strings.Contains(body, u.use) {
			values = append(values, u.name+" as _"+u.name)
		}
	}
	for _, name := range []string{"JSONValue", "Method", "Schema"} {
		if strings.Contains(body, "_"+name) {
			types = append(types, name+" as _"+name)
		}
	}
	if len(values) > 0 {
		g.p(`import { %s } from "@adapterkit/sdk";`, strings.Join(values, ", "))
	}
	if len(types) > 0 {
		g.p(`import type { %s } from "@adapterkit/sdk";`, strings.Join(types, ", "))
	}
	g.b.WriteString(body)
	return nil
}

func tsKey(name string) string {
	if tsIdent.MatchString(name) {
		return name
	}
	q, _ := json.Marshal(name)
	return string(q)
}

// tsType is the static type of t.
func (g *gen) tsType(t *Type) string {
	var s string
	switch t.Kind {
	case Bool:
		s = "boolean"
	case Int:
		s = "number"
		if strings.HasSuffix(t.Int, "64") {
			s = "number | bigint"
		}
	case Float:
		s = "number"
	case Number:
		s = "_JSONNumber"
	case String, Time:
		s = "string"
	case Bytes:
		s = "Uint8Array"
	case List:
		e := g.tsType(t.Elem)
		if strings.Contains(e, " ") {
			e = "(" + e + ")"
		}
		s = e + "[]"
	case Map:
		s = "{ [key: string]: " + g.tsType(t.Elem) + " }"
	case Ref:
		s = g.names[t.Name]
	case Any:
		return "_JSONValue"
	}
	if t.Nullable {
		s += " | null"
	}
	return s
}

// tsSchema is the schema of t where a value is given (an element, a map's value).
func (g *gen) tsSchema(t *Type) string {
	var s string
	switch t.Kind {
	case Bool:
		s = "_t.boolean()"
	case Int:
		s = "_t." + t.Int + "()"
	case Float:
		s = fmt.Sprintf("_t.float%d()", t.Bits)
	case Number:
		s = "_t.jsonNumber()"
	case String:
		s = "_t.string()"
	case Time:
		s = "_t.time()"
	case Bytes:
		s = "_t.bytes()"
	case List:
		s = "_t.array(" + g.tsSchema(t.Elem) + ")"
	case Map:
		s = "_t.record(" + g.tsSchema(t.Elem) + ")"
	case Ref:
		s = "_lazy(() => " + g.names[t.Name] + ", " + strconv.Quote(g.expected(t)) + ")"
	case Any:
		return "_t.any()"
	}
	if t.Nullable {
		s += ".nullable()"
	}
	return s
}

// expected is what a value of t is in JSON, in the SDK's refusals.
func (g *gen) expected(t *Type) string {
	u, n := g.target(&Type{Kind: t.Kind, Name: t.Name})
	if n != nil {
		return "an object"
	}
	switch u.Kind {
	case Bool:
		return "true or false"
	case Int:
		return "an integer"
	case Float, Number:
		return "a number"
	case String, Time:
		return "a string"
	case Bytes:
		return "a base64 string"
	case List:
		return "an array"
	case Map:
		return "an object"
	}
	return "any value"
}

// tsField is the schema of a member of type t: left out (or null), its zero value.
func (g *gen) tsField(t *Type) string {
	s := g.tsSchema(t)
	if t.Nullable || t.Kind == Any {
		return s
	}
	switch t.Kind {
	case Bool:
		return s + ".default(false)"
	case Int, Float:
		return s + ".default(0)"
	case Number:
		return s + `.default(() => new _JSONNumber("0"))`
	case String:
		return s + `.default("")`
	case Time:
		return s // absent: the zero time, "0001-01-01T00:00:00Z"
	case List:
		return s + ".default(() => [])"
	case Ref:
		u, n := g.target(t)
		if n != nil {
			return s + ".default(() => " + g.names[n.Name] + ".parse({}))"
		}
		if u.Kind == Ref || u.Nullable || u.Kind == Any {
			return s // the named schema takes null, and so an absent member
		}
		return g.tsSchema(t) + strings.TrimPrefix(g.tsField(u), g.tsSchema(u))
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
