package contractgen

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Value is a JSON value of a method's params, generated from the contract's schema, for
// adapterctl check --contract.
type Value struct {
	Case string // what it tries: "empty", "maxima", "minima", "deep", "random 1" ...
	JSON []byte
}

// The values the generated cases use.
const (
	unicodeText = "é ü 😀 𝄞 \u2028\u2029 \"quoted\" \\ <>& \x00\x1f \u00a0 ﬀ"
	maxTime     = "9999-12-31T23:59:59.999999999-23:59"
	minTime     = "0001-01-01T00:00:00Z"
	midTime     = "2026-02-28T12:30:45.5+05:30"
	deepDepth   = 100
	randomCases = 3
)

// Values returns the cases of the params of the method with the params type named
// params: edge cases first (no member at all, every value at its maximum, at its
// minimum, a type that contains itself nested deepDepth times), then a few values drawn
// from a fixed seed.
func (m *Model) Values(params string) []Value {
	root := &Type{Kind: Ref, Name: params}
	v := &valueGen{m: m, rec: m.recursive()}
	var out []Value
	add := func(name string, x any) {
		if x == nil {
			x = map[string]any{} // params are an object (a nil map is sent as {})
		}
		b, err := json.Marshal(x)
		if err != nil {
			return // not reached: the values are strings, numbers, maps and slices
		}
		out = append(out, Value{Case: name, JSON: b})
	}
	if _, n := (&gen{m: m}).target(root); n != nil {
		add("empty", map[string]any{})
	}
	add("maxima", v.value(root, "max", 0))
	add("minima", v.value(root, "min", 0))
	if v.rec[params] || v.reaches(root, map[string]bool{}) {
		add("deep", v.value(root, "deep", 0))
	}
	v.rnd = rand.New(rand.NewPCG(1, 2))
	for i := range randomCases {
		add("random "+strconv.Itoa(i+1), v.value(root, "random", 0))
	}
	return out
}

// recursive returns the named types that contain themselves.
func (m *Model) recursive() map[string]bool {
	out := map[string]bool{}
	for _, n := range m.Types {
		seen := map[string]bool{}
		var walk func(t *Type) bool
		walk = func(t *Type) bool {
			switch t.Kind {
			case List, Map:
				return walk(t.Elem)
			case Ref:
				if t.Name == n.Name {
					return true
				}
				if seen[t.Name] {
					return false
				}
				seen[t.Name] = true
				return walkNamed(m.Lookup(t.Name), walk)
			}
			return false
		}
		out[n.Name] = walkNamed(n, walk)
	}
	return out
}

func walkNamed(n *Named, walk func(*Type) bool) bool {
	if !n.Struct {
		return walk(n.Alias)
	}
	for _, f := range n.Fields {
		if walk(f.Type) {
			return true
		}
	}
	return false
}

// valueGen makes values of types.
type valueGen struct {
	m   *Model
	rec map[string]bool
	rnd *rand.Rand
}

// reaches reports whether t names a type that contains itself.
func (v *valueGen) reaches(t *Type, seen map[string]bool) bool {
	switch t.Kind {
	case List, Map:
		return v.reaches(t.Elem, seen)
	case Ref:
		if v.rec[t.Name] {
			return true
		}
		if seen[t.Name] {
			return false
		}
		seen[t.Name] = true
		n := v.m.Lookup(t.Name)
		if !n.Struct {
			return v.reaches(n.Alias, seen)
		}
		for _, f := range n.Fields {
			if v.reaches(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

var intRange = map[string][2]string{
	"int8": {"-128", "127"}, "int16": {"-32768", "32767"}, "int32": {"-2147483648", "2147483647"},
	"int64": {"-9223372036854775808", "9223372036854775807"}, "uint8": {"0", "255"}, "uint16": {"0", "65535"},
	"uint32": {"0", "4294967295"}, "uint64": {"0", "18446744073709551615"},
}

// value returns a value of t in mode "max", "min", "deep" or "random", at a depth of
// nesting of named types.
func (v *valueGen) value(t *Type, mode string, depth int) any {
	if mode == "random" && t.Nullable && v.rnd.IntN(4) == 0 {
		return nil
	}
	if t.Nullable && (mode == "min" || depth > 2 && mode != "deep" || depth > deepDepth) {
		return nil
	}
	pick := func(lo, hi, mid any) any {
		switch mode {
		case "max":
			return hi
		case "random":
			return []any{lo, hi, mid}[v.rnd.IntN(3)]
		}
		return lo
	}
	switch t.Kind {
	case Bool:
		return pick(false, true, true)
	case Int:
		r := intRange[t.Int]
		return pick(json.Number(r[0]), json.Number(r[1]), json.Number("7"))
	case Float:
		hi := "1.7976931348623157e308"
		if t.Bits == 32 {
			hi = "3.4028235e38"
		}
		return pick(json.Number("-"+hi), json.Number(hi), json.Number("0.1"))
	case Number:
		return pick(json.Number("0"), json.Number("-12345678901234567890.5e-3"), json.Number("1.50"))
	case String:
		return pick("", unicodeText, "ascii")
	case Time:
		return pick(minTime, maxTime, midTime)
	case Bytes:
		return pick("", "AAEC/w==", "aGVsbG8=")
	case List:
		n := 1
		if mode == "min" || depth > 2 && mode != "deep" {
			n = 0
		} else if mode == "random" {
			n = v.rnd.IntN(3)
		}
		if t.Len > 0 && n > t.Len {
			n = t.Len
		}
		out := []any{}
		for range n {
			out = append(out, v.value(t.Elem, mode, depth+1))
		}
		return out
	case Map:
		out := map[string]any{}
		if mode == "min" || depth > 2 && mode != "deep" {
			return out
		}
		key := unicodeText
		switch {
		case strings.Contains(t.Keys, "T(?:"):
			key = maxTime
		case t.Keys != "":
			key = "1"
		}
		out[key] = v.value(t.Elem, mode, depth+1)
		return out
	case Ref:
		n := v.m.Lookup(t.Name)
		if !n.Struct {
			return v.value(n.Alias, mode, depth)
		}
		obj := map[string]any{}
		deepOne := mode == "deep"
		for _, f := range n.Fields {
			fm := mode
			if mode == "deep" {
				fm = "min" // one member nests; the others are minima
				if deepOne && v.reaches(f.Type, map[string]bool{}) {
					fm, deepOne = "deep", false
				}
			}
			obj[f.JSON] = v.value(f.Type, fm, depth+1)
		}
		return obj
	case Any:
		return pick(nil, map[string]any{"n": json.Number("1.5"), "l": []any{unicodeText, nil, true}}, json.Number("-0.25"))
	}
	return nil
}

// Missing returns where a member of a struct is absent from value, a JSON value of the
// named type typ ("/link: up"), or "". The codec writes every member of a struct but
// those it leaves out when empty, which the schema lists (contract.OmittedKeyword).
func (m *Model) Missing(typ string, value []byte) string {
	x, err := object(append(append([]byte(`{"v":`), value...), '}'))
	if err != nil {
		return ""
	}
	return m.missing(&Type{Kind: Ref, Name: typ}, x["v"], "")
}

func (m *Model) missing(t *Type, x any, at string) string {
	switch t.Kind {
	case List:
		if l, ok := x.([]any); ok {
			for i, e := range l {
				if w := m.missing(t.Elem, e, at+"/"+strconv.Itoa(i)); w != "" {
					return w
				}
			}
		}
	case Map:
		if o, ok := x.(map[string]any); ok {
			for k, e := range o {
				if w := m.missing(t.Elem, e, at+"/"+k); w != "" {
					return w
				}
			}
		}
	case Ref:
		n := m.Lookup(t.Name)
		if !n.Struct {
			return m.missing(n.Alias, x, at)
		}
		o, ok := x.(map[string]any)
		if !ok {
			return ""
		}
		for _, f := range n.Fields {
			e, ok := o[f.JSON]
			if !ok && f.Omitted {
				continue
			}
			if !ok {
				if at == "" {
					at = "/"
				}
				return at + ": " + f.JSON
			}
			if w := m.missing(f.Type, e, strings.TrimSuffix(at, "/")+"/"+f.JSON); w != "" {
				return w
			}
		}
	}
	return ""
}
