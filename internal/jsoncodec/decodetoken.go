package jsoncodec

import (
	"strconv"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/proto"
)

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

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
