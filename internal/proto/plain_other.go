//go:build !amd64 || purego

package proto

// plainRun returns an index j ≥ i such that p[i:j] is all plain (see isPlain), reaching
// within fifteen bytes of the first byte that is not: the caller goes on byte by byte
// from j.
func plainRun(p []byte, i int) int { return plainRunWords(p, i) }
