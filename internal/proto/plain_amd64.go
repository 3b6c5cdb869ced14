//go:build !purego

package proto

// plainBlocks returns how many bytes at the start of b, a multiple of 16, are plain
// (see isPlain): it stops at the first 16-byte block holding any other byte. SSE2, which
// every amd64 processor has.
//
//go:noescape
func plainBlocks(b []byte) int

// plainRun returns an index j ≥ i such that p[i:j] is all plain (see isPlain), reaching
// within fifteen bytes of the first byte that is not: the caller goes on byte by byte
// from j.
func plainRun(p []byte, i int) int {
	if len(p)-i >= 32 {
		i += plainBlocks(p[i:])
	}
	return plainRunWords(p, i)
}
