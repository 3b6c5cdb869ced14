package jsoncodec

import "strconv"

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
