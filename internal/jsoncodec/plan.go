package jsoncodec

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// plan is what the decoders know about one Go type, computed once per type.
type plan struct {
	t    reflect.Type
	kind reflect.Kind
	// local: the decoder can read a value of this type (the types it contains are
	// judged where the text reaches them). Otherwise a value for it fails with the
	// reason CheckType gives, and only then: a struct may hold a field of a type the
	// decoder cannot fill, as long as no member names it.
	local bool
	elem  *plan // pointer, slice and map element
	// um: the type decodes itself (UnmarshalJSON, UnmarshalText or
	// UnmarshalMapstructure, on the type or its pointer); the decoder then hands it the
	// value and looks no further into it.
	um unmarshal
	// key: how a map's member names become its keys.
	key keyKind
	// struct fields, flattened through embedded structs, in declaration order
	fields []field
	known  []string // field names, for unknown-member errors
}

type field struct {
	name  string
	index []int
	p     *plan
}

// unmarshal is how a type decodes itself, if it does.
type unmarshal uint8

const (
	umNone unmarshal = iota
	umJSON           // json.Unmarshaler: given the value's JSON text
	umText           // encoding.TextUnmarshaler: given a string's contents
	// umTree: mapstructure's Unmarshaler, given the value as a tree (objects as
	// map[string]any, arrays as []any, numbers as json.Number), as mapstructure hands it.
	umTree
)

// treeUnmarshaler is mapstructure's Unmarshaler interface, declared here by its method
// so that types written for mapstructure keep decoding themselves without this package
// linking mapstructure (whose net dependency makes every adapter built with cgo
// dynamically linked, about a millisecond more per start).
type treeUnmarshaler interface {
	UnmarshalMapstructure(any) error
}

// keyKind is how a map key is read from a member name, the inverse of how the encoder
// writes it (as encoding/json does): a string kind as it is, then a TextUnmarshaler,
// then an integer in decimal.
type keyKind uint8

const (
	keyString keyKind = iota
	keyText
	keyInt
	keyUint
)

// unmarshalOf returns how values of t decode themselves. Pointer receivers count: the
// decoders always hold an addressable value. A pointer type decodes as its element (null
// leaves it nil), and an interface is filled, not asked.
func unmarshalOf(t reflect.Type) unmarshal {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface || methodless(t) {
		return umNone
	}
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(jsonUnmarshalerType):
		return umJSON
	case pt.Implements(textUnmarshalerType):
		return umText
	case pt.Implements(treeUnmarshalerType):
		return umTree
	}
	return umNone
}

// methodless reports whether neither t nor *t has a method, so that no interface check
// of them can succeed: predeclared types (string, int64, ...), and unnamed slices,
// arrays, maps, channels and functions, and unnamed pointers to those or to pointers.
// It spares reflect.PointerTo, which for a pointer type the program never names (*[]T)
// searches the binary's type names: at a start, declaring a contract checks every type
// of its methods.
func methodless(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Interface:
		return false // an unnamed struct has its embedded fields' methods
	case reflect.Pointer:
		if t.Name() != "" {
			return false
		}
		e := t.Elem()
		return e.Kind() == reflect.Pointer && e.Name() == "" || methodless(e)
	}
	return t.Name() == "" || t.PkgPath() == ""
}

// keyKindOf returns how keys of type kt are read, false when they cannot be.
func keyKindOf(kt reflect.Type) (keyKind, bool) {
	switch {
	case kt.Kind() == reflect.String:
		return keyString, true
	case reflect.PointerTo(kt).Implements(textUnmarshalerType):
		return keyText, true
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return keyInt, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return keyUint, true
	}
	return 0, false
}

var (
	plans   sync.Map // reflect.Type -> *plan
	buildMu sync.Mutex

	treeUnmarshalerType = reflect.TypeFor[treeUnmarshaler]()

	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planFor returns the plan of t, building it (and those of the types it contains) once.
func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	b := &builder{seen: map[reflect.Type]*plan{}}
	root := b.build(t)
	for _, p := range b.order {
		plans.LoadOrStore(p.t, p)
	}
	return root
}

type builder struct {
	seen  map[reflect.Type]*plan
	order []*plan
}

func (b *builder) build(t reflect.Type) *plan {
	if p, ok := b.seen[t]; ok {
		return p
	}
	if v, ok := plans.Load(t); ok {
		return v.(*plan)
	}
	p := &plan{t: t, kind: t.Kind()}
	b.seen[t] = p
	b.order = append(b.order, p)
	p.local = true
	if p.um = unmarshalOf(t); p.um != umNone {
		return p // the type's own method reads the value: nothing below it is decoded
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
	case reflect.Interface:
		p.local = p.local && t.NumMethod() == 0
	case reflect.Pointer:
		p.elem = b.build(t.Elem())
	case reflect.Slice:
		if !isBytes(t) { // bytes (of any byte type) are a base64 string: no element plan
			p.elem = b.build(t.Elem())
		}
	case reflect.Array:
		p.elem = b.build(t.Elem())
	case reflect.Map:
		var ok bool
		if p.key, ok = keyKindOf(t.Key()); !ok {
			p.local = false
		}
		p.elem = b.build(t.Elem())
	case reflect.Struct:
		p.local = p.local && b.fields(p, t, nil)
		for _, f := range p.fields {
			p.known = append(p.known, f.name)
		}
	default:
		p.local = false // complex numbers, channels, functions...
	}
	return p
}

// fields flattens the fields of struct t (at index path at) into p: the members the
// encoder writes (as encoding/json chooses them), matched by name (the
// json tag name, else the Go field name, compared exactly). An embedded struct without
// a tag name is inlined, exported or not; with one it is a member of that name. It
// reports false when the struct uses something CheckType refuses.
func (b *builder) fields(p *plan, t reflect.Type, at []int) bool {
	ok := true
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(slices.Clone(at), i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue // never written, so never read ("-," names a member "-")
		}
		name, opts, _ := strings.Cut(tag, ",")
		for o := range strings.SplitSeq(opts, ",") {
			if o == "squash" || o == "remain" {
				ok = false // mapstructure's options, which the encoder does not apply
			}
		}
		if f.Anonymous && name == "" {
			switch {
			case f.Type.Kind() == reflect.Struct:
				ok = b.fields(p, f.Type, index) && ok
				continue
			case f.Type.Kind() == reflect.Pointer:
				ok = false // an embedded pointer: refused by CheckType
				continue
			}
		}
		if !f.IsExported() {
			continue // a member naming it is unknown, as the encoder never writes it
		}
		if name == "" {
			name = f.Name
		}
		for _, g := range p.fields {
			if g.name == name {
				ok = false // two fields take the same member: refused by CheckType
			}
		}
		p.fields = append(p.fields, field{name: name, index: index, p: b.build(f.Type)})
	}
	return ok
}

// fieldIndex returns the index in p.fields of the field named name, or -1.
func (p *plan) fieldIndex(name []byte) int {
	for i := range p.fields {
		if p.fields[i].name == string(name) {
			return i
		}
	}
	return -1
}
