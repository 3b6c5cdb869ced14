package proto_test

import (
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// SkipString finds the same end and the same escapes as ScanString on every string
// ScanString accepts, escaped quotes and backslashes included, and reports no end when
// there is no closing quote.
func TestSkipString(t *testing.T) {
	for _, tc := range []struct {
		in      string
		end     int // -1: no closing quote
		escaped bool
	}{
		{`""`, 2, false},
		{`"abc",1`, 5, false},
		{`"a\"b"`, 6, true},
		{`"a\\"b"`, 5, true},
		{`"a\\\"b"`, 8, true},
		{`"\u0022x"`, 9, true},
		{`"é\n"}`, 6, true},
		{`"` + strings.Repeat("x", 100) + `\\" `, 104, true},
		{`"\\\\\\\\"`, 10, true},
		{`"abc`, -1, false},
		{`"ab\"`, -1, false},
		{`"ab\`, -1, false},
		{`"` + strings.Repeat(`\n`, 20000) + `x"`, 40003, true},
		{`"` + strings.Repeat(`\"`, 20000) + `"`, 40002, true},
		{`"` + strings.Repeat("y", 40000) + `\\"`, 40004, true},
	} {
		end, esc, ok := proto.SkipString([]byte(tc.in), 0)
		if !ok {
			end, esc = -1, tc.escaped // escapes are not reported without an end
		}
		if end != tc.end || esc != tc.escaped {
			t.Errorf("SkipString(%q) = %d, %v; want %d, %v", tc.in, end, esc, tc.end, tc.escaped)
		}
		if tc.end < 0 {
			continue
		}
		send, sesc, err := proto.ScanString([]byte(tc.in), 0)
		if err != nil || send != end || sesc != esc {
			t.Errorf("ScanString(%q) = %d, %v, %v; SkipString %d, %v", tc.in, send, sesc, err, end, esc)
		}
	}
}

// FuzzSkipString: wherever ScanString accepts a string, SkipString finds the same end
// and escapes; on anything else it stays within the text.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"\\"`, `"\u00e9\\\"x"`, "\"\xff\"", `"ab`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || in[0] != '"' {
			return
		}
		end, esc, ok := proto.SkipString(in, 0)
		if ok && (end < 2 || end > len(in) || in[end-1] != '"') {
			t.Fatalf("SkipString(%q) = %d: not a closing quote", in, end)
		}
		send, sesc, err := proto.ScanString(in, 0)
		if err != nil {
			return
		}
		if !ok || end != send || esc != sesc {
			t.Fatalf("%q: ScanString %d, %v; SkipString %d, %v, %v", in, send, sesc, end, esc, ok)
		}
	})
}

// Around the 16 KiB chunks SkipString searches by (and twice that): a quote or an
// escape at, just before or just after a boundary is found as ScanString finds it.
func TestSkipStringChunkBoundaries(t *testing.T) {
	for _, base := range []int{16 << 10, 32 << 10} {
		for at := base - 3; at <= base+3; at++ {
			for _, tail := range []string{`"`, `\""`, `\\"`, `\n"`, `\"x"`} {
				in := []byte(`"` + strings.Repeat("x", at-1) + tail + "rest")
				want, wesc, err := proto.ScanString(in, 0)
				if err != nil {
					t.Fatal(err)
				}
				end, esc, ok := proto.SkipString(in, 0)
				if !ok || end != want || esc != wesc {
					t.Errorf("quote or escape at %d (%q): SkipString %d, %v, %v; ScanString %d, %v", at, tail, end, esc, ok, want, wesc)
				}
			}
		}
	}
}

// FuzzVerbatim: Verbatim(s) holds exactly when AppendString writes s unchanged between
// its quotes.
func FuzzVerbatim(f *testing.F) {
	for _, s := range []string{"", "plain", "é€😀", `q"`, `b\`, "\n", "\x7f", "\xff", "\u2028", "\u2029", strings.Repeat("abc", 40) + "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		same := string(proto.AppendString(nil, s)) == `"`+s+`"`
		if got := proto.Verbatim(s); got != same {
			t.Fatalf("Verbatim(%q) = %v, AppendString writes it unchanged: %v", s, got, same)
		}
	})
}
