package proto

import (
	"bytes"
	"unsafe"
)

// Token-level scanning for decoders above this package (internal/jsoncodec, behind
// package codec), so that the JSON grammar and UTF-8 rules are written once.

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

// SkipString returns the index just past the closing quote of the string whose opening
// quote is p[i], and whether it contains escapes, in a text that [ScanString] (or the
// envelope decoder, which validates every string of a frame) has already accepted: it
// looks only for quotes and backslashes, with the runtime's vectorized byte search, and
// checks neither UTF-8 nor control characters nor the escapes themselves. On a text that
// was not validated its answer is unspecified but within p; ok is false only when no
// closing quote is found.
func SkipString(p []byte, i int) (end int, escaped, ok bool) {
	j := i + 1     // the next byte to look at
	q := -1        // the next quote at or after j, once found
	clear := i + 1 // p[j:clear] holds no quote
	for j < len(p) {
		if q < j {
			// Look for the next quote a chunk at a time, so that the search for
			// backslashes that follows reads what this one brought into the cache.
			from := max(j, clear)
			w := p[from:min(len(p), from+plainChunk)]
			if k := bytes.IndexByte(w, '"'); k >= 0 {
				q = from + k
			} else {
				q, clear = -1, from+len(w)
			}
		}
		limit := clear
		if q >= j {
			limit = q
		}
		if b := bytes.IndexByte(p[j:limit], '\\'); b >= 0 {
			// An escape: its backslash and the byte after it (a quote or backslash
			// included) are skipped; \uXXXX's hex digits hold neither.
			escaped = true
			j += b + 2
			// Escapes come in runs (text with many newlines or quotes): look at the
			// next bytes one by one before searching again.
			for n := 0; n < 16 && j < len(p); n++ {
				switch p[j] {
				case '\\':
					j += 2
					n = 0
					continue
				case '"':
					return j + 1, escaped, true
				}
				j++
			}
			continue
		}
		if q >= j {
			return q + 1, escaped, true
		}
		j = limit
	}
	return 0, escaped, false
}
