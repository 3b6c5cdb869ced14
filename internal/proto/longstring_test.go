package proto_test

import (
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// The envelope decoder notes where the long strings of a result's value or a request's
// params lie, at offsets into it, whether they hold escapes, and whether they can be
// written as they are; short strings, and those outside the value, are not noted.
func TestMessageLongStrings(t *testing.T) {
	const n = 70 << 10
	plain := strings.Repeat("x", n)
	accented := strings.Repeat("é", n/2)
	escaped := strings.Repeat("x", n) + `\n`
	sep := strings.Repeat("x", n) + "\u2028"
	value := `{"a":"` + plain + `","b":"short","c":"` + escaped + `","d":"` + sep + `","` + plain + `":1,"e":["` + accented + `"]}`
	type want struct {
		text              string
		escaped, verbatim bool
	}
	wants := []want{
		{plain, false, true},
		{escaped, true, false},
		{sep, false, false},
		{plain, false, true}, // a member name
		{accented, false, true},
	}
	check := func(t *testing.T, text []byte, got []proto.LongString) {
		t.Helper()
		if len(got) != len(wants) {
			t.Fatalf("%d long strings noted, want %d: %+v", len(got), len(wants), got)
		}
		for i, l := range got {
			w := wants[i]
			if l.Start < 0 || l.End > len(text) || text[l.Start] != '"' || text[l.End-1] != '"' {
				t.Fatalf("string %d at [%d, %d) is not between quotes", i, l.Start, l.End)
			}
			if string(text[l.Start+1:l.End-1]) != w.text || l.Escaped != w.escaped || l.Verbatim != w.verbatim {
				t.Errorf("string %d: %d bytes, escaped %v, verbatim %v; want %d bytes, %v, %v",
					i, l.End-l.Start-2, l.Escaped, l.Verbatim, len(w.text), w.escaped, w.verbatim)
			}
		}
	}
	t.Run("result", func(t *testing.T) {
		m, err := proto.DecodeAdapterMessage([]byte(`{"v":1,"type":"result","id":7,"value":` + value + `}`))
		if err != nil {
			t.Fatal(err)
		}
		check(t, m.Value, m.Strings)
	})
	t.Run("request", func(t *testing.T) {
		// A long method name lies outside the params: not noted.
		m, err := proto.DecodeHostMessage([]byte(`{"v":1,"type":"request","id":7,"method":"` + plain + `","params":` + value + `}`))
		if err != nil {
			t.Fatal(err)
		}
		check(t, m.Params, m.Strings)
	})
	t.Run("short strings only", func(t *testing.T) {
		m, err := proto.DecodeAdapterMessage([]byte(`{"v":1,"type":"result","id":7,"value":{"a":"b"}}`))
		if err != nil || m.Strings != nil {
			t.Fatalf("strings %v, err %v; want none", m.Strings, err)
		}
	})
}
