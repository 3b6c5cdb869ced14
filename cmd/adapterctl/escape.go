package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// escapeWriter escapes terminal control characters in what is written through it:
// text from the daemon (adapter names, errors, log tails, results) could otherwise
// move the cursor, rewrite earlier lines, set the window title or worse on the
// terminal of whoever reads the output. C0 controls other than newline and tab, DEL,
// C1 controls (U+0080..U+009F) and the bidirectional overrides are written as
// \xNN or \uNNNN; invalid UTF-8 bytes as \xNN. A rune split across two writes is
// held until the next one.
type escapeWriter struct {
	w       io.Writer
	pending []byte // the start of a rune the last write ended in
}

// rawWriter returns the writer under an escapeWriter, for adapterctl's own control
// sequences (top's screen clearing).
func rawWriter(w io.Writer) io.Writer {
	if x, ok := w.(*escapeWriter); ok {
		return x.w
	}
	return w
}

func (x *escapeWriter) Write(p []byte) (int, error) {
	buf := append(x.pending, p...)
	x.pending = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(buf[i:]) {
				x.pending = append([]byte(nil), buf[i:]...)
				break
			}
			out = fmt.Appendf(out, `\x%02x`, buf[i])
			i++
			continue
		}
		switch {
		case r == '\n' || r == '\t':
			out = append(out, byte(r))
		case r < 0x20 || r == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, buf[i:i+size]...)
		}
		i += size
	}
	if _, err := x.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
