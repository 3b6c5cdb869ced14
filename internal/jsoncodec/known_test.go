package jsoncodec

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// With the envelope decoder's notes of a text's long strings, DecodeOwned decodes
// what it decodes without them, takes each string's end from the note (a note for a
// string it skips, or one it has passed, is dropped), and collects the shared strings
// noted as verbatim, and only those.
func TestDecodeValidOwnedLongStrings(t *testing.T) {
	type doc struct {
		A string   `json:"a"`
		C string   `json:"c"`
		D string   `json:"d"`
		E []string `json:"e"`
	}
	long := strings.Repeat("x", aliasMin)
	accented := strings.Repeat("é", aliasMin)
	text := []byte(`{"a":"` + long + `","skipped":"` + long + `","c":"` + long + `\n","d":"` + long + "\u2028" + `","e":["` + accented + `"]}`)
	m, err := proto.DecodeAdapterMessage(append([]byte(`{"v":1,"type":"result","id":1,"value":`), append(text, '}')...))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Strings) != 5 {
		t.Fatalf("%d long strings noted, want 5", len(m.Strings))
	}
	var plain doc
	if err := DecodeOwned(m.Value, nil, &plain, true); err != nil {
		t.Fatal(err)
	}
	known := &Known{Long: m.Strings}
	var hinted doc
	if err := DecodeOwned(m.Value, known, &hinted, true); err != nil {
		t.Fatal(err)
	}
	if hinted.A != plain.A || hinted.C != plain.C || hinted.D != plain.D || len(hinted.E) != 1 || hinted.E[0] != plain.E[0] {
		t.Fatal("decoding with the notes differs from decoding without")
	}
	if hinted.A != long || hinted.C != long+"\n" || hinted.D != long+"\u2028" || hinted.E[0] != accented {
		t.Fatal("wrong values")
	}
	// a and e[0] are verbatim and shared; c has an escape (a copy), d holds U+2028.
	if len(known.Verbatim) != 2 {
		t.Fatalf("%d verbatim strings collected, want 2", len(known.Verbatim))
	}
	for i, s := range []string{hinted.A, hinted.E[0]} {
		v := known.Verbatim[i]
		if unsafe.SliceData(v) != unsafe.StringData(s) || len(v) != len(s) {
			t.Errorf("verbatim %d is not the memory of the decoded string", i)
		}
	}
	// The notes are what is trusted: one that says a shared string is not verbatim
	// keeps it out of the list, which shows the decoder took the note.
	notes := append([]proto.LongString(nil), m.Strings...)
	notes[0].Verbatim = false
	known = &Known{Long: notes}
	if err := DecodeOwned(m.Value, known, &hinted, true); err != nil {
		t.Fatal(err)
	}
	if len(known.Verbatim) != 1 || unsafe.SliceData(known.Verbatim[0]) != unsafe.StringData(hinted.E[0]) {
		t.Fatalf("with a's note saying not verbatim: %d collected, want only e[0]", len(known.Verbatim))
	}
	// Without notes nothing is collected.
	known = &Known{}
	if err := DecodeOwned(m.Value, known, &hinted, true); err != nil || len(known.Verbatim) != 0 {
		t.Fatalf("without notes: %d collected, err %v", len(known.Verbatim), err)
	}
}
