package proto

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects, as encoding/json does, so a hostile
// payload of brackets cannot exhaust the stack.
const maxDepth = 10000

// syntaxError is a JSON or UTF-8 error at a byte offset of a payload.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

// scanner validates JSON text and its UTF-8 in one pass, without building values. It
// notes where the long strings it met lie (see LongString).
type scanner struct {
	p     []byte
	i     int
	depth int
	long  []LongString
	sep   bool // the string being scanned holds U+2028 or U+2029
}

// A LongString is where a string of at least longStringMin bytes lies in a text the
// envelope decoder validated: p[Start] is its opening quote and p[End-1] its closing
// one; Escaped says whether it holds escapes; Verbatim whether AppendString writes its
// contents as they are (no escapes, no U+2028 or U+2029: see [Verbatim]). The decoder
// of a frame's params or result value gets them with it, so that finding where a long
// string ends, or whether it can be written as it is, does not cost a second pass over
// its bytes.
type LongString struct {
	Start, End int
	Escaped    bool
	Verbatim   bool
}

// longStringMin is the length from which a string's place is noted: below it, finding
// its end again is cheap.
const longStringMin = 64 << 10

func (s *scanner) fail(msg string) error { return &syntaxError{off: s.i, msg: msg} }

func (s *scanner) ws() {
	for s.i < len(s.p) {
		switch s.p[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Kinds of JSON value, as reported to a field callback.
const (
	kindObject = '{'
	kindArray  = '['
	kindString = '"'
	kindNumber = '0'
	kindTrue   = 't'
	kindFalse  = 'f'
	kindNull   = 'n'
)

// value skips one JSON value starting at s.i and reports its kind.
func (s *scanner) value() (byte, error) {
	if s.i >= len(s.p) {
		return 0, s.fail("unexpected end of JSON")
	}
	switch c := s.p[s.i]; {
	case c == '{':
		return kindObject, s.object(nil)
	case c == '[':
		return kindArray, s.array()
	case c == '"':
		_, err := s.str()
		return kindString, err
	case c == 't':
		return kindTrue, s.lit("true")
	case c == 'f':
		return kindFalse, s.lit("false")
	case c == 'n':
		return kindNull, s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return kindNumber, s.number()
	}
	return 0, s.fail("invalid character")
}

func (s *scanner) lit(word string) error {
	if len(s.p)-s.i < len(word) || string(s.p[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.p) && s.p[s.i] >= '0' && s.p[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *scanner) number() error {
	if s.p[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.p) {
		return s.fail("unexpected end of number")
	}
	if s.p[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return s.fail("invalid number")
	}
	if s.i < len(s.p) && s.p[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.fail("invalid number fraction")
		}
	}
	if s.i < len(s.p) && (s.p[s.i] == 'e' || s.p[s.i] == 'E') {
		s.i++
		if s.i < len(s.p) && (s.p[s.i] == '+' || s.p[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.fail("invalid number exponent")
		}
	}
	return nil
}

// str skips a string starting at its opening quote and reports whether it has escapes.
func (s *scanner) str() (escaped bool, err error) {
	start := s.i
	s.sep = false
	escaped, err = s.strBody()
	if err == nil && s.i-start >= longStringMin {
		s.long = append(s.long, LongString{Start: start, End: s.i, Escaped: escaped, Verbatim: !escaped && !s.sep})
	}
	return escaped, err
}

// strBody is str without the note of a long string.
func (s *scanner) strBody() (escaped bool, err error) {
	s.i++
	p := s.p
	for {
		// Fast path: eight bytes at a time while none needs attention.
		s.i = plainRun(p, s.i)
		// Then plain ASCII byte by byte.
		for s.i < len(p) {
			c := p[s.i]
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				break
			}
			s.i++
		}
		if s.i >= len(p) {
			return escaped, s.fail("unterminated string")
		}
		switch c := p[s.i]; {
		case c == '"':
			s.i++
			return escaped, nil
		case c == '\\':
			escaped = true
			s.i++
			if s.i >= len(p) {
				return escaped, s.fail("unterminated escape")
			}
			switch p[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(p)-s.i < 5 || !isHex(p[s.i+1]) || !isHex(p[s.i+2]) || !isHex(p[s.i+3]) || !isHex(p[s.i+4]) {
					return escaped, s.fail("invalid unicode escape")
				}
				s.i += 5
			default:
				return escaped, s.fail("invalid escape")
			}
		case c < 0x20:
			return escaped, s.fail("control character in string")
		default:
			r, size := utf8.DecodeRune(p[s.i:])
			if r == utf8.RuneError && size <= 1 {
				return escaped, s.fail("invalid UTF-8")
			}
			if r == '\u2028' || r == '\u2029' {
				s.sep = true
			}
			s.i += size
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.fail("nesting too deep")
	}
	return nil
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++
	s.ws()
	if s.i < len(s.p) && s.p[s.i] == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if _, err := s.value(); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.p) {
			return s.fail("unterminated array")
		}
		switch s.p[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected , or ] in array")
		}
	}
}

// fieldFunc receives one member of an object: its key (the raw bytes between the quotes,
// escaped reports escapes in it) and the span and kind of its value.
type fieldFunc func(key []byte, escaped bool, start, end int, kind byte) error

// object skips an object starting at its opening brace, calling fn (if not nil) for each
// member in order.
func (s *scanner) object(fn fieldFunc) error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++
	s.ws()
	if s.i < len(s.p) && s.p[s.i] == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.p) || s.p[s.i] != '"' {
			return s.fail("expected string key in object")
		}
		ks := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		key := s.p[ks+1 : s.i-1]
		s.ws()
		if s.i >= len(s.p) || s.p[s.i] != ':' {
			return s.fail("expected : after object key")
		}
		s.i++
		s.ws()
		vs := s.i
		kind, err := s.value()
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(key, escaped, vs, s.i, kind); err != nil {
				return err
			}
		}
		s.ws()
		if s.i >= len(s.p) {
			return s.fail("unterminated object")
		}
		switch s.p[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected , or } in object")
		}
	}
}

// walkObject validates that p is exactly one JSON object (whitespace around it allowed,
// A2) and calls fn for each top-level member.
func walkObject(p []byte, fn fieldFunc) error {
	s := scanner{p: p}
	s.ws()
	if s.i >= len(s.p) || s.p[s.i] != '{' {
		return s.fail("payload is not a JSON object")
	}
	if err := s.object(fn); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.p) {
		return s.fail("data after the JSON object")
	}
	return nil
}

// validObject reports whether p is exactly one valid JSON object.
func validObject(p []byte) error { return walkObject(p, nil) }

// validValue reports whether p is exactly one valid JSON value.
func validValue(p []byte) error {
	s := scanner{p: p}
	s.ws()
	if _, err := s.value(); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.p) {
		return s.fail("data after the JSON value")
	}
	return nil
}

// keyString returns a member key as a Go string, resolving escapes when there are any.
func keyString(key []byte, escaped bool) string {
	if !escaped {
		return string(key)
	}
	return unquote(key)
}

// unquote decodes the contents of a JSON string already validated by the scanner.
func unquote(raw []byte) string {
	var out string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if err := json.Unmarshal(q, &out); err != nil {
		// Unreachable for scanner-validated input; keep the raw text rather than lose it.
		return string(raw)
	}
	return out
}

// parseID parses a request identity: a plain integer literal from 1 to max (R14, A6).
func parseID(lit []byte, max uint64) (uint64, bool) {
	if len(lit) == 0 || len(lit) > 16 || lit[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n >= 1 && n <= max
}
