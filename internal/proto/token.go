package proto

import (
	"unsafe"
)

// Token-level scanning for decoders above this package (package codec), so that the
// JSON grammar and UTF-8 rules are written once.

// ScanString checks the JSON string whose opening quote is p[i] and returns the index
// just past its closing quote, and whether it contains escapes. Escapes and UTF-8 are
// validated; a large plain string is scanned eight bytes at a time.
func ScanString(p []byte, i int) (end int, escaped bool, err error) {
	s := scanner{p: p, i: i}
	escaped, err = s.str()
	return s.i, escaped, err
}

// ScanNumber checks the JSON number starting at p[i] and returns the index just past it.
func ScanNumber(p []byte, i int) (end int, err error) {
	if i >= len(p) {
		return i, &syntaxError{off: i, msg: "unexpected end of JSON"}
	}
	s := scanner{p: p, i: i}
	err = s.number()
	return s.i, err
}

// Unquote returns the contents of a JSON string validated by [ScanString] (without its
// quotes) with its escapes resolved.
func Unquote(raw []byte) string { return unquote(raw) }

// PlainPrefix returns the length of the longest prefix of s made of printable ASCII
// other than '"' and '\\': bytes a JSON string carries as they are. It looks at sixteen
// bytes at a time.
func PlainPrefix(s string) int {
	i := 0
	if len(s) >= 8 {
		b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
		i = plainRun(b, 0)
	}
	for i < len(s) {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
		i++
	}
	return i
}
