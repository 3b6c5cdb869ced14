package codec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/internal/validjson"
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
	// valid: b was validated by the module's envelope decoder (decodeValidOwned), so a
	// string's end is found without checking its contents a second time.
	valid bool
	// long: where b's long strings lie, as the envelope decoder noted them while
	// validating b (valid only), in the order of the text; those passed are dropped.
	long []proto.LongString
	// verbatim: the string str last returned was one of long, which the envelope
	// decoder found could be written as it is.
	verbatim bool
	// known, if not nil, collects the shared strings known to be verbatim.
	known *validjson.Known
}

// aliasMin is the length from which decodeAliasing shares a string's bytes with the text.
const aliasMin = 64 << 10

func (d *decoder) syntax(msg string) *Error {
	return &Error{kind: kindSyntax, Detail: msg + " at offset " + strconv.Itoa(d.i)}
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// lit consumes the literal word (true, false, null).
func (d *decoder) lit(word string) *Error {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return d.syntax("invalid literal")
	}
	d.i += len(word)
	return nil
}

// str consumes a string and returns its raw contents and whether it has escapes.
func (d *decoder) str() ([]byte, bool, *Error) {
	if d.valid && len(d.long) > 0 {
		for len(d.long) > 0 && d.long[0].Start < d.i {
			d.long = d.long[1:] // a string skipped without str, or passed
		}
		if len(d.long) > 0 && d.long[0].Start == d.i {
			l := d.long[0]
			d.long = d.long[1:]
			raw := d.b[d.i+1 : l.End-1]
			d.i = l.End
			d.verbatim = l.Verbatim
			return raw, l.Escaped, nil
		}
	}
	d.verbatim = false
	if d.valid {
		if end, esc, ok := proto.SkipString(d.b, d.i); ok {
			raw := d.b[d.i+1 : end-1]
			d.i = end
			return raw, esc, nil
		}
	}
	end, esc, err := proto.ScanString(d.b, d.i)
	if err != nil {
		return nil, false, &Error{kind: kindSyntax, Detail: err.Error()}
	}
	raw := d.b[d.i+1 : end-1]
	d.i = end
	return raw, esc, nil
}

func stringOf(raw []byte, escaped bool) string {
	if escaped {
		return proto.Unquote(raw)
	}
	return string(raw)
}

// number consumes a number and returns its literal.
func (d *decoder) number() ([]byte, *Error) {
	end, err := proto.ScanNumber(d.b, d.i)
	if err != nil {
		return nil, &Error{kind: kindSyntax, Detail: err.Error()}
	}
	lit := d.b[d.i:end]
	d.i = end
	return lit, nil
}

// skip consumes any one value and returns its text (for error messages).
func (d *decoder) skip() ([]byte, *Error) {
	start := d.i
	if _, err := d.any(false); err != nil {
		return nil, err
	}
	return d.b[start:d.i], nil
}

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

// objectStart consumes an object's '{' and reports whether the object is empty (then
// its '}' is consumed too).
func (d *decoder) objectStart() (bool, *Error) {
	if err := d.enter(); err != nil {
		return false, err
	}
	d.i++ // '{'
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		d.depth--
		return true, nil
	}
	return false, nil
}

// memberKey consumes a member name and its ':'.
func (d *decoder) memberKey() ([]byte, bool, *Error) {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false, d.syntax("expected a member name")
	}
	key, esc, err := d.str()
	if err != nil {
		return nil, false, err
	}
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != ':' {
		return nil, false, d.syntax("expected ':' after a member name")
	}
	d.i++
	return key, esc, nil
}

// objectNext consumes the ',' before another member (true) or the object's '}' (false).
func (d *decoder) objectNext() (bool, *Error) {
	d.ws()
	if d.i >= len(d.b) {
		return false, d.syntax("unterminated object")
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return true, nil
	case '}':
		d.i++
		d.depth--
		return false, nil
	}
	return false, d.syntax("expected ',' or '}' in an object")
}

// object decodes an object into the struct v.
func (d *decoder) object(p *plan, v reflect.Value) *Error {
	empty, err := d.objectStart()
	if empty || err != nil {
		return err
	}
	var seen uint64
	var seenMore, skipped map[string]bool
	for {
		key, esc, err := d.memberKey()
		if err != nil {
			return err
		}
		if esc {
			key = []byte(proto.Unquote(key))
		}
		n := p.fieldIndex(key)
		if n < 0 {
			if !d.ignore {
				return &Error{kind: kindUnknown, Path: string(key), Known: p.known}
			}
			if skipped == nil {
				skipped = map[string]bool{}
			}
			if skipped[string(key)] {
				return &Error{kind: kindDuplicate, Path: string(key), Detail: "appears twice"}
			}
			skipped[string(key)] = true
			if _, err := d.skip(); err != nil {
				return err.under(string(key))
			}
			if more, err := d.objectNext(); !more || err != nil {
				return err
			}
			continue
		}
		f := &p.fields[n]
		dup := false
		if n < 64 {
			dup = seen&(1<<n) != 0
			seen |= 1 << n
		} else {
			if seenMore == nil {
				seenMore = map[string]bool{}
			}
			dup, seenMore[f.name] = seenMore[f.name], true
		}
		if dup {
			return &Error{kind: kindDuplicate, Path: f.name, Detail: "appears twice"}
		}
		fv := v.Field(f.index[0])
		for _, i := range f.index[1:] {
			fv = fv.Field(i)
		}
		if err := d.value(f.p, fv); err != nil {
			return err.under(f.name)
		}
		if more, err := d.objectNext(); !more || err != nil {
			return err
		}
	}
}

// mapValue decodes an object into the map v (string keys).
func (d *decoder) mapValue(p *plan, v reflect.Value) *Error {
	fresh := v.IsNil()
	if fresh {
		v.Set(reflect.MakeMap(p.t))
	}
	empty, err := d.objectStart()
	if empty || err != nil {
		return err
	}
	var seen map[string]bool
	kt := p.t.Key()
	for {
		key, esc, err := d.memberKey()
		if err != nil {
			return err
		}
		k := stringOf(key, esc)
		e := reflect.New(p.elem.t).Elem()
		if err := d.value(p.elem, e); err != nil {
			return err.under("[" + k + "]")
		}
		kv, kerr := mapKey(p.key, kt, k)
		if kerr != nil {
			return kerr.under("[" + k + "]")
		}
		dup := false
		if fresh {
			n := v.Len()
			v.SetMapIndex(kv, e)
			dup = v.Len() == n
		} else {
			if seen == nil {
				seen = map[string]bool{}
			}
			dup, seen[k] = seen[k], true
			v.SetMapIndex(kv, e)
		}
		if dup {
			return &Error{kind: kindDuplicate, Path: "[" + k + "]", Detail: "appears twice"}
		}
		if more, err := d.objectNext(); !more || err != nil {
			return err
		}
	}
}

// mapKey returns the key of type kt that the member name k stands for.
func mapKey(kk keyKind, kt reflect.Type, k string) (reflect.Value, *Error) {
	switch kk {
	case keyText:
		kp := reflect.New(kt)
		if err := kp.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
			return reflect.Value{}, refused(kt, "the key", err)
		}
		return kp.Elem(), nil
	case keyInt, keyUint:
		kv := reflect.New(kt).Elem()
		if !isInteger(strings.TrimPrefix(k, "-")) {
			return kv, typeErr("expected an integer key, got " + strconv.Quote(k))
		}
		if err := setNumber([]byte(k), kv); err != nil {
			return kv, err
		}
		return kv, nil
	}
	kv := reflect.ValueOf(k)
	if kt != kv.Type() {
		kv = kv.Convert(kt)
	}
	return kv, nil
}

// array decodes an array into the slice v.
func (d *decoder) array(p *plan, v reflect.Value) *Error {
	s := reflect.MakeSlice(p.t, 0, 0)
	_, err := d.elements(func(n int) *Error {
		if n == s.Cap() {
			grown := reflect.MakeSlice(p.t, n, max(4, 2*n))
			reflect.Copy(grown, s)
			s = grown
		}
		s = s.Slice(0, n+1)
		return d.value(p.elem, s.Index(n))
	})
	if err != nil {
		return err
	}
	v.Set(s)
	return nil
}

// fixedArray decodes an array into the Go array v: its elements in order, the rest
// zero; an array with more elements than v holds is refused.
func (d *decoder) fixedArray(p *plan, v reflect.Value) *Error {
	a := reflect.New(p.t).Elem()
	count, err := d.elements(func(n int) *Error {
		if n < a.Len() {
			return d.value(p.elem, a.Index(n))
		}
		_, err := d.skip()
		return err
	})
	if err != nil {
		return err
	}
	if count > a.Len() {
		return typeErr("expected an array of at most " + strconv.Itoa(a.Len()) + " elements, got " + strconv.Itoa(count))
	}
	v.Set(a)
	return nil
}

// elements reads the array at d.i, handing each element's index to elem, which reads
// the element; it returns how many there were. An element's error is named by its
// index.
func (d *decoder) elements(elem func(n int) *Error) (int, *Error) {
	if err := d.enter(); err != nil {
		return 0, err
	}
	d.i++ // '['
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		d.depth--
		return 0, nil
	}
	for n := 0; ; n++ {
		if err := elem(n); err != nil {
			return 0, err.under("[" + strconv.Itoa(n) + "]")
		}
		d.ws()
		if d.i >= len(d.b) {
			return 0, d.syntax("unterminated array")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return n + 1, nil
		default:
			return 0, d.syntax("expected ',' or ']' in an array")
		}
	}
}

// any decodes one value into the generic form: map[string]any, []any, string, bool,
// nil, and for numbers float64 (floats true, as encoding/json does) or json.Number.
// Duplicate members are refused.
func (d *decoder) any(floats bool) (any, *Error) {
	d.ws()
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of JSON")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		m := map[string]any{}
		empty, err := d.objectStart()
		if empty || err != nil {
			return m, err
		}
		for {
			key, esc, err := d.memberKey()
			if err != nil {
				return nil, err
			}
			k := stringOf(key, esc)
			x, err := d.any(floats)
			if err != nil {
				return nil, err.under("[" + k + "]")
			}
			if _, dup := m[k]; dup {
				return nil, &Error{kind: kindDuplicate, Path: "[" + k + "]", Detail: "appears twice"}
			}
			m[k] = x
			if more, err := d.objectNext(); !more || err != nil {
				return m, err
			}
		}
	case c == '[':
		if err := d.enter(); err != nil {
			return nil, err
		}
		d.i++
		a := []any{}
		d.ws()
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			d.depth--
			return a, nil
		}
		for {
			x, err := d.any(floats)
			if err != nil {
				return nil, err.under("[" + strconv.Itoa(len(a)) + "]")
			}
			a = append(a, x)
			d.ws()
			if d.i >= len(d.b) {
				return nil, d.syntax("unterminated array")
			}
			switch d.b[d.i] {
			case ',':
				d.i++
			case ']':
				d.i++
				d.depth--
				return a, nil
			default:
				return nil, d.syntax("expected ',' or ']' in an array")
			}
		}
	case c == '"':
		raw, esc, err := d.str()
		if err != nil {
			return nil, err
		}
		return stringOf(raw, esc), nil
	case c == 't':
		return true, d.lit("true")
	case c == 'f':
		return false, d.lit("false")
	case c == 'n':
		return nil, d.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		lit, err := d.number()
		if err != nil {
			return nil, err
		}
		if !floats {
			return numberOf(lit), nil
		}
		n, perr := parseNumber(unsafeString(lit), anyType)
		if perr != nil {
			return nil, perr
		}
		return n.f, nil
	}
	return nil, d.syntax("invalid character " + strconv.QuoteRune(rune(d.b[d.i])) + " looking for a value")
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
