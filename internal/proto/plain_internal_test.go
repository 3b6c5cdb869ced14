package proto

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// firstSpecial is the definition plainRun must agree with: the index of the first byte
// at or after i that is not plain, or len(p).
func firstSpecial(p []byte, i int) int {
	for i < len(p) && isPlain(p[i]) {
		i++
	}
	return i
}

// checkPlainRun checks both implementations of plainRun on p from i: everything they
// skip is plain, and they stop within fifteen bytes of the first byte that is not.
func checkPlainRun(t *testing.T, p []byte, i int) {
	t.Helper()
	want := firstSpecial(p, i)
	for _, impl := range []struct {
		name string
		f    func([]byte, int) int
	}{{"plainRun", plainRun}, {"plainRunWords", plainRunWords}} {
		got := impl.f(p, i)
		if got < i || got > want || want-got > 15 {
			t.Fatalf("%s(%q, %d) = %d; first byte that is not plain at %d", impl.name, p, i, got, want)
		}
	}
}

// Every byte value at every position of buffers around the block sizes: the SSE2 and
// the portable scans skip only plain bytes and stop close to the first other one.
func TestPlainRun(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100} {
		base := bytes.Repeat([]byte("a"), n)
		checkPlainRun(t, base, 0)
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				p := bytes.Clone(base)
				p[pos] = byte(c)
				for _, i := range []int{0, 1, pos} {
					if i <= n {
						checkPlainRun(t, p, i)
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		p := make([]byte, r.IntN(300))
		for j := range p {
			p[j] = byte(0x20 + r.IntN(0x5f))
			if r.IntN(200) == 0 {
				p[j] = byte(r.IntN(256))
			}
		}
		checkPlainRun(t, p, r.IntN(len(p)+1))
	}
}

func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`0123456789abcdef0123456789abcdef"`), 0)
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef\x7f\x80"), 3)
	f.Fuzz(func(t *testing.T, p []byte, i int) {
		if i < 0 || i > len(p) {
			return
		}
		checkPlainRun(t, p, i)
	})
}
