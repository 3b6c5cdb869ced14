package proto

import (
	"slices"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plainChunk is how much of a long string is scanned before it is copied: well within
// a core's first-level data cache.
const plainChunk = 16 << 10

// appendString appends s as a JSON string, escaped as encoding/json escapes it without
// HTML escaping: plain runs copied in bulk (found eight bytes at a time), quote and
// backslash escaped, control characters as \b \f \n \r \t or \u00XX, invalid UTF-8
// replaced with U+FFFD, U+2028 and U+2029 escaped. The output is always valid JSON of
// valid UTF-8.
func appendString(dst []byte, s string) []byte {
	dst = append(slices.Grow(dst, len(s)+2), '"')
	for len(s) > 0 {
		// A long plain run is scanned and copied a chunk at a time, so that the copy
		// reads what the scan just brought into the cache instead of reading a large
		// string from memory twice.
		k := min(len(s), plainChunk)
		n := PlainPrefix(s[:k])
		dst = append(dst, s[:n]...)
		s = s[n:]
		if n == k {
			continue
		}
		c := s[0]
		if c < utf8.RuneSelf {
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return append(dst, '"')
}

// AppendString appends s to dst as a JSON string literal (quoted and escaped; invalid
// UTF-8 becomes U+FFFD).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// Verbatim reports whether AppendString writes s exactly as it is between its quotes:
// valid UTF-8 with nothing to escape (no quote, backslash, control character, U+2028 or
// U+2029).
func Verbatim(s string) bool {
	for len(s) > 0 {
		n := PlainPrefix(s)
		s = s[n:]
		if len(s) == 0 {
			return true
		}
		if s[0] < utf8.RuneSelf {
			return false
		}
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		s = s[size:]
	}
	return true
}
