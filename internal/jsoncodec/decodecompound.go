package jsoncodec

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/internal/proto"
)

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
