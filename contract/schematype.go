package contract

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OmittedKeyword is the keyword of an object's schema that lists, sorted, the members
// the codec leaves out when they are empty (fields tagged omitempty or omitzero). It is
// an annotation: validators ignore it. A checker of results (adapterctl check
// --contract) reads it to tell a member that a Go adapter may leave out from one that
// every writer of the contract writes.
const OmittedKeyword = "x-omitempty"

// The JSON Schema of one Go type, by the codec's rules (see Schema). A schema is a
// map[string]any, encoded by encoding/json with its keys sorted.

var (
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// timePattern is the RFC 3339 text time.Time writes and reads: a date that exists
// (February 29th in leap years only, years 0000 to 9999), a time without leap second,
// at most nine digits of fraction, and Z or an offset of at most 23:59.
const timePattern = `^(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))` +
	`|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)` +
	`T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$`

// base64Pattern is padded standard base64, as the codec writes and reads []byte.
const base64Pattern = `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`

// The largest floats, in the shortest decimal form the codec writes them in.
const (
	maxFloat32 = "3.4028235e38"
	maxFloat64 = "1.7976931348623157e308"
)

// anyDef is the name in $defs of the schema of an empty interface.
const anyDef = "any"

// typeSchema returns the schema resource of type t with the given $id.
func typeSchema(t reflect.Type, id string) map[string]any {
	g := &schemaGen{root: t, defs: map[reflect.Type]string{}, taken: map[string]bool{anyDef: true},
		bodies: map[string]any{}, open: map[reflect.Type]bool{t: true}}
	s := g.body(t)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = id
	if len(g.bodies) > 0 {
		s["$defs"] = g.bodies
	}
	return s
}

// schemaGen builds one schema resource.
type schemaGen struct {
	root   reflect.Type
	defs   map[reflect.Type]string // types described in $defs, by their name there
	taken  map[string]bool         // names used in $defs
	bodies map[string]any          // $defs
	open   map[reflect.Type]bool   // types being described (to find those that contain themselves)
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

// describe returns the schema of t where it appears inside the root: a reference for
// the root, a named struct and a type that contains itself, else t's body.
func (g *schemaGen) describe(t reflect.Type) map[string]any {
	if t == g.root {
		return map[string]any{"$ref": "#"}
	}
	if name, ok := g.defs[t]; ok {
		return ref(name)
	}
	if g.open[t] { // t contains itself: described in $defs once its body is done
		name := g.defName(t)
		g.defs[t] = name
		return ref(name)
	}
	named := t.Kind() == reflect.Struct && t.Name() != "" && !selfWritten(t) && t != timeType
	if named {
		g.defs[t] = g.defName(t)
	}
	g.open[t] = true
	s := g.body(t)
	delete(g.open, t)
	if name, ok := g.defs[t]; ok {
		g.bodies[name] = s
		return ref(name)
	}
	return s
}

// defName returns a name for t in $defs: its Go name ("device.Reading") with characters
// a JSON pointer or a URI fragment would have to escape replaced, made unique.
func (g *schemaGen) defName(t reflect.Type) string {
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, t.String())
	name := base
	for n := 2; g.taken[name]; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	g.taken[name] = true
	return name
}

// selfWritten reports whether the codec writes values of t with t's own MarshalJSON or
// MarshalText (on t or *t), as it does wherever t appears.
func selfWritten(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(marshalerType) || pt.Implements(textMarshalerType)
}

// body returns the schema of t itself.
func (g *schemaGen) body(t reflect.Type) map[string]any {
	if t == timeType {
		return map[string]any{"type": "string", "format": "date-time", "pattern": timePattern}
	}
	if selfWritten(t) {
		if reflect.PointerTo(t).Implements(marshalerType) {
			return map[string]any{} // its own JSON text: any value
		}
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer", "minimum": int64(-1) << (t.Bits() - 1), "maximum": int64(1<<(t.Bits()-1) - 1)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": uint64(math.MaxUint64) >> (64 - t.Bits())}
	case reflect.Float32, reflect.Float64:
		limit := maxFloat64
		if t.Kind() == reflect.Float32 {
			limit = maxFloat32
		}
		return map[string]any{"type": "number", "minimum": json.Number("-" + limit), "maximum": json.Number(limit)}
	case reflect.String:
		if t == numberType {
			return map[string]any{"type": "number"}
		}
		return map[string]any{"type": "string"}
	case reflect.Pointer:
		return nullable(g.describe(t.Elem()))
	case reflect.Interface:
		if _, ok := g.bodies[anyDef]; !ok {
			g.bodies[anyDef] = map[string]any{"minimum": json.Number("-" + maxFloat64), "maximum": json.Number(maxFloat64),
				"items": ref(anyDef), "additionalProperties": ref(anyDef)}
		}
		return ref(anyDef)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !writesItself(t.Elem()) {
			return nullable(map[string]any{"type": "string", "contentEncoding": "base64", "pattern": base64Pattern})
		}
		return nullable(map[string]any{"type": "array", "items": g.describe(t.Elem())})
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.describe(t.Elem()), "maxItems": t.Len()}
	case reflect.Map:
		s := map[string]any{"type": "object", "additionalProperties": g.describe(t.Elem())}
		if p := keyPattern(t.Key()); p != "" {
			s["propertyNames"] = map[string]any{"pattern": p}
		}
		return nullable(s)
	case reflect.Struct:
		props := map[string]any{}
		var omitted []string
		g.fields(t, props, &omitted)
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(omitted) > 0 {
			slices.Sort(omitted)
			s[OmittedKeyword] = omitted
		}
		return s
	}
	return map[string]any{} // not reached for a type codec.CheckType accepts
}

// writesItself reports whether t or *t has MarshalJSON or MarshalText: a slice of such
// bytes is an array, not base64.
func writesItself(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) || selfWritten(t)
}

// fields adds the members of struct t to props, as the codec lays them out: the json
// tag's name, else the Go field name; untagged embedded structs inlined; unexported
// fields and fields tagged "-" left out. The names of members tagged omitempty or
// omitzero, which the codec may leave out, are added to omitted.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, omitted *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, omitted)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.describe(f.Type)
		for o := range strings.SplitSeq(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				*omitted = append(*omitted, name)
				break
			}
		}
	}
}

// nullable returns s that also accepts null.
func nullable(s map[string]any) map[string]any {
	switch ty := s["type"].(type) {
	case nil:
		if len(s) == 0 {
			return s // any value already
		}
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	case string:
		s["type"] = []string{ty, "null"}
	}
	return s
}

// keyPattern returns the pattern of the member names of a map with keys of type kt, as
// the codec reads them: "" for strings and texts, the key type's range for integers.
func keyPattern(kt reflect.Type) string {
	switch {
	case kt.Kind() == reflect.String:
		return ""
	case kt == timeType:
		return timePattern
	case reflect.PointerTo(kt).Implements(textUnmarshaler):
		return ""
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		limit := uint64(1) << (kt.Bits() - 1)
		return `^(?:0*(?:` + upTo(strconv.FormatUint(limit-1, 10)) + `)|-0*(?:` + upTo(strconv.FormatUint(limit, 10)) + `))$`
	}
	return `^0*(?:` + upTo(strconv.FormatUint(uint64(math.MaxUint64)>>(64-kt.Bits()), 10)) + `)$`
}

// upTo returns a regular expression (alternatives) that matches the decimal digits of
// the numbers from 0 to n, without leading zeros beyond those of numbers shorter than n.
func upTo(n string) string {
	var alts []string
	if len(n) > 1 {
		alts = append(alts, "[0-9]{1,"+strconv.Itoa(len(n)-1)+"}")
	}
	for i := range len(n) {
		if n[i] == '0' || i == 0 && n[i] == '1' && len(n) > 1 {
			continue // no digit below it, or only shorter numbers, matched above
		}
		alt := n[:i] + "0"
		if n[i] > '1' {
			alt = n[:i] + "[0-" + string(n[i]-1) + "]"
		}
		switch rest := len(n) - i - 1; rest {
		case 0:
		case 1:
			alt += "[0-9]"
		default:
			alt += "[0-9]{" + strconv.Itoa(rest) + "}"
		}
		alts = append(alts, alt)
	}
	return strings.Join(append(alts, n), "|")
}
