package jsoncodec

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"
)

// joined is text with its splices put back in.
func joined(t *testing.T, text []byte, splices []Splice) []byte {
	t.Helper()
	var out []byte
	at := 0
	for _, s := range splices {
		if s.At < at || s.At > len(text) {
			t.Fatalf("splice at %d out of order or beyond the text (%d bytes, previous at %d)", s.At, len(text), at)
		}
		out = append(append(out, text[at:s.At]...), s.Data...)
		at = s.At
	}
	return append(out, text[at:]...)
}

// A value written with its long strings by reference is, once joined, exactly what
// Append writes; only strings Append writes as they are (valid UTF-8, nothing to
// escape) and of at least the minimum length are spliced, and a splice is the string's
// own memory, not a copy.
func TestAppendSpliced(t *testing.T) {
	long := strings.Repeat("abcdefgh", 8) // 64 bytes
	type inner struct {
		S string `json:"s"`
	}
	type outer struct {
		A  string            `json:"a"`
		B  []string          `json:"b"`
		M  map[string]string `json:"m"`
		P  *inner            `json:"p"`
		I  any               `json:"i"`
		N  int               `json:"n"`
		Sh string            `json:"sh"`
	}
	tests := []struct {
		name    string
		v       any
		spliced []string // the strings expected as splices, in order
	}{
		{"one long string", inner{S: long}, []string{long}},
		{"short string copied", inner{S: "short"}, nil},
		{"exactly the minimum", inner{S: long[:32]}, []string{long[:32]}},
		{"one below the minimum", inner{S: long[:31]}, nil},
		{"non-ASCII written as is", inner{S: long + "é€😀"}, []string{long + "é€😀"}},
		{"quote escaped: copied", inner{S: long + `"`}, nil},
		{"control character: copied", inner{S: long + "\n"}, nil},
		{"invalid UTF-8: copied", inner{S: long + "\xff"}, nil},
		{"U+2028: copied", inner{S: long + "\u2028"}, nil},
		{"nested", outer{
			A: long + "1", B: []string{long + "2", "x", long + "3"}, M: map[string]string{"k": long + "4", "j": "y"},
			P: &inner{S: long + "5"}, I: long + "6", N: 7, Sh: "z",
		}, []string{long + "1", long + "2", long + "3", long + "4", long + "5", long + "6"}},
		{"a top-level string", long, []string{long}},
		{"nil", nil, nil},
		// The string option makes Append use encoding/json for the whole value: nothing
		// is spliced and the text is encoding/json's.
		{"encoding/json fallback", struct {
			S string `json:"s"`
			N int    `json:"n,string"`
		}{S: long, N: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := Append(nil, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			prefix := []byte("head:")
			text, splices, err := AppendSpliced(bytes.Clone(prefix), tt.v, 32, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := joined(t, text, splices)
			if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
				t.Fatalf("joined %q, want %q after the prefix", got, want)
			}
			if len(splices) != len(tt.spliced) {
				t.Fatalf("%d splices, want %d", len(splices), len(tt.spliced))
			}
			for i, s := range splices {
				if string(s.Data) != tt.spliced[i] {
					t.Errorf("splice %d is %q, want %q", i, s.Data, tt.spliced[i])
				}
				if text[s.At-1] != '"' || text[s.At] != '"' {
					t.Errorf("splice %d at %d is not between the quotes of its string: %q", i, s.At, text)
				}
			}
		})
	}
	s := long + "shared"
	_, splices, err := AppendSpliced(nil, inner{S: s}, 32, nil, nil)
	if err != nil || len(splices) != 1 || unsafe.SliceData(splices[0].Data) != unsafe.StringData(s) {
		t.Fatalf("the splice is not the string's own memory (err %v)", err)
	}
}

// Splices are appended to the caller's list; a value that fails to encode leaves it as
// it was.
func TestAppendSplicedAppends(t *testing.T) {
	long := strings.Repeat("y", 40)
	first := []Splice{{At: 0, Data: []byte("before")}}
	text, splices, err := AppendSpliced(nil, struct{ S string }{long}, 32, nil, first)
	if err != nil || len(splices) != 2 || string(splices[0].Data) != "before" || string(splices[1].Data) != long || string(text) != `{"S":""}` {
		t.Fatalf("got %q %v %v", text, splices, err)
	}
	_, splices, err = AppendSpliced(nil, failing{}, 32, nil, first)
	if err == nil || len(splices) != 1 {
		t.Fatalf("a failing value: splices %v, err %v", splices, err)
	}
}

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errFailing }

var errFailing = bytes.ErrTooLarge

// A string known to be verbatim (a part, cut on rune boundaries, of a string the
// envelope decoder found needs no escape) is spliced without being checked again; a
// part cut inside a rune, or a string elsewhere, is checked as any other.
func TestAppendSplicedKnownVerbatim(t *testing.T) {
	// The "known" text holds a quote: had the encoder checked it, it would have
	// escaped it. Trusting it is what the test sees (the module only ever passes
	// texts the envelope decoder found verbatim).
	known := []byte(strings.Repeat("é", 20) + `"` + strings.Repeat("z", 20))
	whole := unsafe.String(&known[0], len(known))
	tests := []struct {
		name    string
		s       string
		spliced bool
	}{
		{"the whole known text", whole, true},
		{"a part on rune boundaries", whole[2 : len(whole)-3], true},
		{"a part that starts inside a rune", whole[1:], false},
		{"a part that ends inside a rune", whole[:3], false},
		{"a copy of the known text", strings.Clone(whole), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, splices, err := AppendSpliced(nil, struct{ S string }{tt.s}, 1, [][]byte{known}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(splices) == 1; got != tt.spliced {
				t.Fatalf("spliced %v, want %v (text %q)", got, tt.spliced, text)
			}
			if tt.spliced && (unsafe.SliceData(splices[0].Data) != unsafe.StringData(tt.s) || len(splices[0].Data) != len(tt.s)) {
				t.Fatal("the splice is not the string's own memory")
			}
			if !tt.spliced {
				want, err := Append(nil, struct{ S string }{tt.s})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(text, want) {
					t.Fatalf("text %q, want Append's %q", text, want)
				}
			}
		})
	}
}
