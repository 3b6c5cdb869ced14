package jsoncodec

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CheckType is codec.CheckType, whose doc states what it refuses: nil when values of
// type t can make the round trip through Append and DecodeValue, otherwise an *Error of
// kind kindUnsupported naming the field and the type. Its plan, its encoder and
// WritesValid's answer are built on first use, not here: building those of every
// method of a contract at its declaration made each adapter start slower, although a
// start calls few of them (BENCH.md).
func CheckType(t reflect.Type) error {
	if _, ok := accepted.Load(t); ok {
		return nil // a method's params and result are often one type
	}
	var c checker
	if err := c.check(t, nil); err != nil {
		return err
	}
	accepted.Store(t, struct{}{})
	return nil
}

// accepted holds the types CheckType accepted.
var accepted sync.Map // reflect.Type -> struct{}

// checker walks a type once. It keeps what it met in slices, not maps: it runs when a
// contract is declared, at every start, and a type has a few dozen parts at most; a
// map's buckets of several sizes cost a start more than the linear searches.
type checker struct {
	seen []reflect.Type
}

// at is where in the value a checked type is: a path of JSON member names, built as a
// string only for an error.
type at struct {
	parent *at
	name   string
}

// String returns the path, "a.b.c", or "" at the top.
func (p *at) String() string {
	if p == nil {
		return ""
	}
	if p.parent == nil {
		return p.name
	}
	return p.parent.String() + "." + p.name
}

// undecodable is the error for a value met where the decoder cannot read one (a plan
// that is not local): the reason CheckType gives for the type.
func undecodable(t reflect.Type) *Error {
	var c checker
	if err := c.check(t, nil); err != nil {
		return err
	}
	return unsupported(nil, t, "cannot be received")
}

func unsupported(path *at, t reflect.Type, detail string) *Error {
	return &Error{kind: kindUnsupported, Path: path.String(), Detail: t.String() + " " + detail}
}

func (c *checker) check(t reflect.Type, path *at) *Error {
	if slices.Contains(c.seen, t) {
		return nil // a recursive type: checked where it was first met
	}
	c.seen = append(c.seen, t)
	um := unmarshalOf(t)
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && !methodless(t) {
		pt := reflect.PointerTo(t)
		switch {
		case pt.Implements(marshalerType):
			if um != umJSON && um != umTree {
				return unsupported(path, t, "cannot be received: it has MarshalJSON but no UnmarshalJSON")
			}
			return nil
		case pt.Implements(textMarshalerType):
			if um == umNone {
				return unsupported(path, t, "cannot be received: it has MarshalText but no UnmarshalText")
			}
			return nil
		case um == umJSON, um == umTree:
			return nil // it reads whatever it is written as
		case um == umText:
			if t.Kind() != reflect.String {
				return unsupported(path, t, "cannot be received: it has UnmarshalText but no MarshalText")
			}
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Uintptr,
		reflect.Invalid:
		return unsupported(path, t, "cannot be sent")
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return unsupported(path, t, "cannot be received: only an empty interface can be filled")
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return c.check(t.Elem(), path)
	case reflect.Map:
		kt := t.Key()
		dec, ok := keyKindOf(kt)
		if !ok || keyEncoder(kt) == nil || dec != keyKindWritten(kt) {
			return unsupported(path, t, "cannot be sent: a map key must be a string, an integer or a TextMarshaler with UnmarshalText")
		}
		return c.check(t.Elem(), path)
	case reflect.Struct:
		var names []string
		return c.fields(t, path, &names)
	}
	return nil
}

// keyKindWritten is how the encoder writes a key of type kt (see keyEncoder), in the
// terms of keyKindOf.
func keyKindWritten(kt reflect.Type) keyKind {
	switch {
	case kt.Kind() == reflect.String:
		return keyString
	case kt.Implements(textMarshalerType) || kt.Kind() != reflect.Pointer && reflect.PointerTo(kt).Implements(textMarshalerType):
		return keyText
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return keyInt
	}
	return keyUint
}

// fields checks the fields of struct t that encoding/json writes; names holds the
// member names taken so far in the object (embedded structs are inlined into it).
func (c *checker) fields(t reflect.Type, path *at, names *[]string) *Error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if f.Type.Kind() == reflect.Pointer {
					return unsupported(path, f.Type, "cannot be received: embed the struct, not a pointer to it")
				}
				if err := c.fields(f.Type, path, names); err != nil { // inlined: its fields are t's
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		here := &at{parent: path, name: name}
		if slices.Contains(*names, name) {
			// encoding/json keeps one of them by its own rules (or neither): refused
			// rather than sent to a field it was not read from.
			return unsupported(here, f.Type, "cannot be sent: two fields of the object are named "+strconv.Quote(name))
		}
		*names = append(*names, name)
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "string":
				return unsupported(here, f.Type, `cannot be received: the json tag option ",string" is not supported`)
			case "squash", "remain":
				return unsupported(here, f.Type, `cannot be sent: the json tag option ",`+o+`" is mapstructure's and the encoder does not apply it (embed the struct to inline its fields)`)
			}
		}
		if err := c.check(f.Type, here); err != nil {
			return err
		}
	}
	return nil
}
