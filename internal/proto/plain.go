package proto

import "encoding/binary"

// Finding the plain runs of JSON strings: the bytes a string carries as they are
// (printable ASCII other than '"' and '\\'). Every string the engine validates, decodes
// or encodes is scanned this way, so a large value costs one fast pass: sixteen bytes at
// a time with SSE2 on amd64 (plain_amd64.s), eight at a time elsewhere.

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// specialMask has the high bit of a byte set where the eight bytes of w may hold a
// byte that needs attention inside a JSON string: a control character, a quote, a
// backslash or a non-ASCII byte. There are no false negatives; a borrow may flag a
// plain byte just above a special one, which only sends the caller to its
// byte-by-byte path.
func specialMask(w uint64) uint64 {
	q := w ^ (lsbs * '"')
	b := w ^ (lsbs * '\\')
	return (w | (w - lsbs*0x20) | (q - lsbs) | (b - lsbs)) & msbs
}

// plainRunWords is plainRun eight bytes at a time, in portable Go.
func plainRunWords(p []byte, i int) int {
	for i+16 <= len(p) {
		if specialMask(binary.LittleEndian.Uint64(p[i:]))|specialMask(binary.LittleEndian.Uint64(p[i+8:])) != 0 {
			break
		}
		i += 16
	}
	if i+8 <= len(p) && specialMask(binary.LittleEndian.Uint64(p[i:])) == 0 {
		i += 8
	}
	return i
}

// isPlain reports whether c is carried as it is inside a JSON string.
func isPlain(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
