package jsoncodec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// maxDepth bounds nesting, as encoding/json and the wire scanner do.
const maxDepth = 10000

// decoder is the direct decoder's state over one JSON text.
type decoder struct {
	b      []byte
	i      int
	depth  int
	ignore bool // skip unknown members instead of refusing them
	alias  bool // long plain strings may share b's memory (decodeAliasing)
	// valid: b was validated by the module's envelope decoder (DecodeOwned), so a
	// string's end is found without checking its contents a second time.
	valid bool
	// long: where b's long strings lie, as the envelope decoder noted them while
	// validating b (valid only), in the order of the text; those passed are dropped.
	long []proto.LongString
	// verbatim: the string str last returned was one of long, which the envelope
	// decoder found could be written as it is.
	verbatim bool
	// known, if not nil, collects the shared strings known to be verbatim.
	known *Known
}

// aliasMin is the length from which decodeAliasing shares a string's bytes with the text.
const aliasMin = 64 << 10

func (d *decoder) enter() *Error {
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	return nil
}

// mismatch consumes the value at d.i and returns the type error for it.
func (d *decoder) mismatch(p *plan) *Error {
	lit, err := d.skip()
	if err != nil {
		return err
	}
	return mismatch(p.t, lit)
}

// value decodes one value (after optional whitespace) into v, of plan p. A null leaves
// v as it is.
func (d *decoder) value(p *plan, v reflect.Value) *Error {
	d.ws()
	if d.i >= len(d.b) {
		return d.syntax("unexpected end of JSON")
	}
	c := d.b[d.i]
	if c == 'n' {
		return d.lit("null")
	}
	if !p.local {
		return undecodable(p.t)
	}
	if p.um != umNone {
		return d.unmarshal(p, v)
	}
	switch p.kind {
	case reflect.Struct:
		if c != '{' {
			return d.mismatch(p)
		}
		return d.object(p, v)
	case reflect.Map:
		if c != '{' {
			return d.mismatch(p)
		}
		return d.mapValue(p, v)
	case reflect.Slice:
		if p.elem == nil { // []byte, base64 as encoding/json writes it
			if c != '"' {
				return d.mismatch(p)
			}
			raw, esc, err := d.str()
			if err != nil {
				return err
			}
			b, berr := base64.StdEncoding.DecodeString(stringOf(raw, esc))
			if berr != nil {
				return typeErr("expected a base64 string, got a string that is not base64")
			}
			v.SetBytes(b) // also for a named byte type: SetBytes goes by the element's kind
			return nil
		}
		if c != '[' {
			return d.mismatch(p)
		}
		return d.array(p, v)
	case reflect.Array:
		if c != '[' {
			return d.mismatch(p)
		}
		return d.fixedArray(p, v)
	case reflect.Pointer:
		if v.IsNil() {
			n := reflect.New(p.t.Elem())
			if err := d.value(p.elem, n.Elem()); err != nil {
				return err
			}
			v.Set(n)
			return nil
		}
		return d.value(p.elem, v.Elem())
	case reflect.Interface:
		x, err := d.any(true)
		if err != nil {
			return err
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	case reflect.String:
		if c == '"' && p.t != numberType {
			raw, esc, err := d.str()
			if err != nil {
				return err
			}
			if d.alias && !esc && len(raw) >= aliasMin {
				if d.verbatim && d.known != nil {
					d.known.Verbatim = append(d.known.Verbatim, raw)
				}
				v.SetString(unsafeString(raw))
				return nil
			}
			v.SetString(stringOf(raw, esc))
			return nil
		}
	case reflect.Bool:
		switch c {
		case 't':
			v.SetBool(true)
			return d.lit("true")
		case 'f':
			v.SetBool(false)
			return d.lit("false")
		}
		return d.mismatch(p)
	}
	// numbers, and the number kinds given something else
	if c == '-' || (c >= '0' && c <= '9') {
		lit, err := d.number()
		if err != nil {
			return err
		}
		return setNumber(lit, v)
	}
	return d.mismatch(p)
}

// unmarshal hands the value at d.i (not null) to the type's own UnmarshalJSON, or the
// contents of the string at d.i to its UnmarshalText. v is addressable: the decoders
// only ever hold struct fields, slice elements and fresh values.
func (d *decoder) unmarshal(p *plan, v reflect.Value) *Error {
	if p.um == umText {
		if d.b[d.i] != '"' {
			return d.mismatch(p)
		}
		raw, esc, err := d.str()
		if err != nil {
			return err
		}
		text := raw // UnmarshalText copies what it keeps
		if esc {
			text = []byte(proto.Unquote(raw))
		}
		if uerr := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText(text); uerr != nil {
			return refused(p.t, "a string", uerr)
		}
		return nil
	}
	if p.um == umTree {
		start := d.i
		tree, err := d.any(false)
		if err != nil {
			return err
		}
		if uerr := v.Addr().Interface().(treeUnmarshaler).UnmarshalMapstructure(tree); uerr != nil {
			return refused(p.t, got(d.b[start:d.i]), uerr)
		}
		return nil
	}
	start := d.i
	var err *Error
	switch c := d.b[d.i]; {
	case c == '"':
		_, _, err = d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		_, err = d.number()
	default:
		_, err = d.any(false)
	}
	if err != nil {
		return err
	}
	text := d.b[start:d.i] // UnmarshalJSON copies what it keeps
	if uerr := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(text); uerr != nil {
		return refused(p.t, got(text), uerr)
	}
	return nil
}
