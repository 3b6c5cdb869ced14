// Package contractgen writes the types and method descriptors of a contract in
// TypeScript, Python and Rust, for adapters written with those SDKs (sdk/), from the
// JSON Schema document package contract's Schema makes: one derivation, the schema's.
// It reads only what Schema writes (the codec's rules); a schema of another shape is
// refused, naming what it could not read.
package contractgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/adapterkit/adapterkit/contract"
)

// Kind is what a JSON value of a type is.
type Kind int

// The kinds of types a contract's schema describes.
const (
	Bool   Kind = iota
	Int         // Type.Int names the Go integer type
	Float       // Type.Bits is 32 or 64
	Number      // a number kept as its literal (json.Number)
	String      // a string (also a type that writes itself as text)
	Time        // a time.Time, as RFC 3339 text
	Bytes       // []byte, as base64 text
	List        // an array of Elem; Len > 0 for a Go array
	Map         // an object of any member names, values Elem
	Ref         // the named type Name
	Any         // any JSON value
)

// Type is one type of the contract, as a field, an element or a method's params or result.
type Type struct {
	Kind     Kind
	Int      string // Int: "int8" ... "uint64"
	Bits     int    // Float: 32 or 64
	Elem     *Type  // List, Map
	Len      int    // List: a Go array's length; 0 for a slice
	Name     string // Ref
	Keys     string // Map: the pattern of the member names (integer or time keys), or ""
	Nullable bool   // null is a value (a Go pointer, slice, map, []byte)
}

// Field is a member of a struct.
type Field struct {
	JSON    string // the member's name
	Type    *Type
	Omitted bool // a Go writer leaves it out when empty (omitempty, omitzero)
}

// Named is a type with a name in the generated file: a struct (Fields), or another type
// (Alias) such as a map that contains itself or a method's result that is not an object.
type Named struct {
	Name   string
	Doc    string // what it is: its Go type, or the method it is the params or result of
	Struct bool
	Fields []Field // sorted by JSON name, as the schema lists them
	Alias  *Type
}

// Method is a method of a service.
type Method struct {
	Name           string // the full name: "example.device.read"
	Ident          string // a name for its descriptor in code: "ReadMethod"
	Params, Result string // the names of its params and result types
}

// Service is a service of the contract.
type Service struct {
	ID      string
	Version int
	Methods []Method
}

// Model is a contract, read from its schema document.
type Model struct {
	Services []Service
	Types    []*Named // in the order first met
}

// Lookup returns the named type called name.
func (m *Model) Lookup(name string) *Named {
	for _, n := range m.Types {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Read reads a document of contract.Schema.
func Read(doc []byte) (*Model, error) {
	var d struct {
		Services []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
			Methods []struct {
				Name   string          `json:"name"`
				Params json.RawMessage `json:"params"`
				Result json.RawMessage `json:"result"`
			} `json:"methods"`
		} `json:"services"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("reading the schema document: %w", err)
	}
	r := &reader{m: &Model{}, names: map[string]bool{}, defs: map[string]string{}, roots: map[string]string{}}
	// A method's name in code is its short name unless two services of the file share it.
	short := map[string]int{}
	for _, s := range d.Services {
		for _, m := range s.Methods {
			short[camel(strings.TrimPrefix(m.Name, s.ID+"."))]++
		}
	}
	for _, s := range d.Services {
		svc := Service{ID: s.ID, Version: s.Version}
		for _, m := range s.Methods {
			ident := camel(strings.TrimPrefix(m.Name, s.ID+"."))
			if short[ident] > 1 {
				ident = camel(m.Name)
			}
			ident = r.unique(ident + "Method")
			base := strings.TrimSuffix(ident, "Method")
			p, err := r.root(m.Params, base+"Params", "the params of "+m.Name)
			if err != nil {
				return nil, fmt.Errorf("%s params: %w", m.Name, err)
			}
			res, err := r.root(m.Result, base+"Result", "the result of "+m.Name)
			if err != nil {
				return nil, fmt.Errorf("%s result: %w", m.Name, err)
			}
			svc.Methods = append(svc.Methods, Method{Name: m.Name, Ident: ident, Params: p, Result: res})
		}
		r.m.Services = append(r.m.Services, svc)
	}
	return r.m, nil
}

// reader reads the schema resources of a document into one model.
type reader struct {
	m     *Model
	names map[string]bool   // names taken
	defs  map[string]string // a $defs entry (its key: name and body) to its named type
	roots map[string]string // a resource's text without its $id to its named type
	// Of the resource being read:
	rootName string
	local    map[string]any    // its $defs
	seen     map[string]string // its $defs names read, to their named types
}

func (r *reader) unique(base string) string {
	name := base
	for n := 2; r.names[name]; n++ {
		name = fmt.Sprintf("%s%d", base, n)
	}
	r.names[name] = true
	return name
}

// root reads one schema resource (a method's params or result) and returns the name of
// its type: a new one, or that of an identical resource read before.
func (r *reader) root(text json.RawMessage, name, doc string) (string, error) {
	s, err := object(text)
	if err != nil {
		return "", err
	}
	delete(s, "$id")
	delete(s, "$schema")
	key, _ := json.Marshal(s)
	if prev, ok := r.roots[string(key)]; ok {
		n := &Named{Name: r.unique(name), Doc: doc, Alias: &Type{Kind: Ref, Name: prev}}
		r.m.Types = append(r.m.Types, n)
		return n.Name, nil
	}
	defs, _ := s["$defs"].(map[string]any)
	delete(s, "$defs")
	r.local, r.seen = defs, map[string]string{}
	n := &Named{Name: r.unique(name), Doc: doc}
	r.rootName = n.Name
	r.roots[string(key)] = n.Name
	r.m.Types = append(r.m.Types, n)
	if err := r.fill(n, s); err != nil {
		return "", err
	}
	return n.Name, nil
}

// fill reads the body s of the named type n.
func (r *reader) fill(n *Named, s map[string]any) error {
	if _, ok := s["properties"]; ok && s["type"] == "object" {
		n.Struct = true
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		omitted := map[string]bool{}
		if l, ok := s[contract.OmittedKeyword].([]any); ok {
			for _, k := range l {
				if k, ok := k.(string); ok {
					omitted[k] = true
				}
			}
		}
		for _, k := range names {
			ps, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("member %q: not a schema", k)
			}
			t, err := r.typ(ps, n.Name+camel(k))
			if err != nil {
				return fmt.Errorf("member %q: %w", k, err)
			}
			n.Fields = append(n.Fields, Field{JSON: k, Type: t, Omitted: omitted[k]})
		}
		return nil
	}
	t, err := r.typ(s, n.Name)
	if err != nil {
		return err
	}
	n.Alias = t
	return nil
}

// intRanges names the Go integer types by their ranges, as the schema writes them.
var intRanges = map[string]string{
	"-128:127": "int8", "-32768:32767": "int16", "-2147483648:2147483647": "int32",
	"-9223372036854775808:9223372036854775807": "int64",
	"0:255": "uint8", "0:65535": "uint16", "0:4294967295": "uint32", "0:18446744073709551615": "uint64",
}

// typ reads the schema s of a type; hint names an object without a name of its own.
func (r *reader) typ(s map[string]any, hint string) (*Type, error) {
	if ref, ok := s["$ref"].(string); ok {
		return r.ref(ref)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		if len(alts) != 2 {
			return nil, fmt.Errorf("anyOf of %d schemas", len(alts))
		}
		inner, ok := alts[0].(map[string]any)
		if null, _ := alts[1].(map[string]any); !ok || len(null) != 1 || null["type"] != "null" {
			return nil, fmt.Errorf("anyOf other than a schema or null")
		}
		t, err := r.typ(inner, hint)
		if err != nil {
			return nil, err
		}
		t.Nullable = true
		return t, nil
	}
	var kind string
	nullable := false
	switch ty := s["type"].(type) {
	case nil:
		return &Type{Kind: Any, Nullable: true}, nil
	case string:
		kind = ty
	case []any:
		if len(ty) != 2 || ty[1] != "null" {
			return nil, fmt.Errorf("type %v", ty)
		}
		kind, _ = ty[0].(string)
		nullable = true
	}
	t := &Type{Nullable: nullable}
	switch kind {
	case "boolean":
		t.Kind = Bool
	case "integer":
		t.Kind = Int
		t.Int = intRanges[fmt.Sprint(s["minimum"])+":"+fmt.Sprint(s["maximum"])]
		if t.Int == "" {
			return nil, fmt.Errorf("an integer from %v to %v is of no Go integer type", s["minimum"], s["maximum"])
		}
	case "number":
		switch fmt.Sprint(s["maximum"]) {
		case "3.4028235e38":
			t.Kind, t.Bits = Float, 32
		case "1.7976931348623157e308":
			t.Kind, t.Bits = Float, 64
		case "<nil>":
			t.Kind = Number
		default:
			return nil, fmt.Errorf("a number up to %v is of no Go float type", s["maximum"])
		}
	case "string":
		switch {
		case s["format"] == "date-time":
			t.Kind = Time
		case s["contentEncoding"] == "base64":
			t.Kind = Bytes
		default:
			t.Kind = String
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("an array without items")
		}
		elem, err := r.typ(items, hint+"Item")
		if err != nil {
			return nil, err
		}
		t.Kind, t.Elem = List, elem
		if n, ok := s["maxItems"].(json.Number); ok {
			l, err := n.Int64()
			if err != nil || l < 0 {
				return nil, fmt.Errorf("maxItems %v", n)
			}
			t.Len = int(l)
		}
	case "object":
		if _, ok := s["properties"]; ok {
			if nullable {
				return nil, fmt.Errorf("a nullable struct written inline")
			}
			n := &Named{Name: r.unique(hint), Doc: "an object without a name of its own"}
			r.m.Types = append(r.m.Types, n)
			if err := r.fill(n, s); err != nil {
				return nil, err
			}
			return &Type{Kind: Ref, Name: n.Name}, nil
		}
		vals, ok := s["additionalProperties"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("an object with neither properties nor a schema of its values")
		}
		elem, err := r.typ(vals, hint+"Value")
		if err != nil {
			return nil, err
		}
		t.Kind, t.Elem = Map, elem
		if names, ok := s["propertyNames"].(map[string]any); ok {
			t.Keys, _ = names["pattern"].(string)
		}
	default:
		return nil, fmt.Errorf("type %q", kind)
	}
	return t, nil
}

// ref reads a reference: the resource's root, or one of its $defs.
func (r *reader) ref(ref string) (*Type, error) {
	if ref == "#" {
		return &Type{Kind: Ref, Name: r.rootName}, nil
	}
	def, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("$ref %q", ref)
	}
	if def == "any" {
		return &Type{Kind: Any, Nullable: true}, nil
	}
	if name, ok := r.seen[def]; ok {
		return &Type{Kind: Ref, Name: name}, nil
	}
	body, ok := r.local[def].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such $defs entry", ref)
	}
	text, _ := json.Marshal(body)
	key := def + "\x00" + string(text)
	if bytes.Contains(text, []byte(`"$ref":"#"`)) { // names this resource's root
		key += "\x00" + r.rootName
	}
	if name, ok := r.defs[key]; ok {
		r.seen[def] = name
		return &Type{Kind: Ref, Name: name}, nil
	}
	base := def
	if i := strings.LastIndexByte(def, '.'); i >= 0 {
		base = def[i+1:]
	}
	n := &Named{Name: r.unique(camel(base)), Doc: "the Go type " + def}
	r.seen[def], r.defs[key] = n.Name, n.Name
	r.m.Types = append(r.m.Types, n)
	if err := r.fill(n, body); err != nil {
		return nil, fmt.Errorf("%s: %w", def, err)
	}
	return &Type{Kind: Ref, Name: n.Name}, nil
}

// object decodes a JSON object, keeping numbers' literals.
func object(text []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return s, nil
}

// camel turns a name into an exported identifier: "get_all" and "get.all" into
// "GetAll", "everything" into "Everything".
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if up {
				c = unicode.ToUpper(c)
			}
			if b.Len() == 0 && unicode.IsDigit(c) {
				b.WriteByte('T')
			}
			b.WriteRune(c)
			up = false
		default:
			up = true
		}
	}
	if b.Len() == 0 {
		return "T"
	}
	return b.String()
}
