package proto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// TestScanObject: the envelope rules ScanObject applies for another protocol, a table
// per rule: one object of valid UTF-8 (else an *EnvelopeError), names exact, the first
// duplicate and the first unknown name reported, spans where the values are.
func TestScanObject(t *testing.T) {
	names := []string{"id", "kind", "params"}
	for _, tc := range []struct {
		rule, in       string
		ok             bool
		dup, unknown   string
		id, kind, prms string
	}{
		{"one object", ``, false, "", "", "", "", ""},
		{"one object", `[]`, false, "", "", "", "", ""},
		{"one object", `{} {}`, false, "", "", "", "", ""},
		{"one object", " {\"id\":1} \n", true, "", "", "1", "", ""},
		{"utf-8", "{\"id\":\"\xff\"}", false, "", "", "", "", ""},
		{"utf-8", "{\"\xc0\xaf\":1}", false, "", "", "", "", ""},
		{"utf-8", "{\"params\":{\"a\":[\"\xed\xa0\x80\"]}}", false, "", "", "", "", ""},
		{"utf-8", `{"id":"\q"}`, false, "", "", "", "", ""},
		{"utf-8", `{"id":"é\u00e9"}`, true, "", "", `"é\u00e9"`, "", ""},
		{"exact names", `{"ID":1,"Kind":2}`, true, "", "ID", "", "", ""},
		{"exact names", `{"\u0069d":1}`, true, "", "", "1", "", ""},
		{"once", `{"id":1,"id":2}`, true, "id", "", "1", "", ""},
		{"once", `{"kind":"a","\u006bind":"b"}`, true, "kind", "", "", `"a"`, ""},
		{"known fields", `{"id":1,"x":2,"y":3}`, true, "", "x", "1", "", ""},
		{"known fields", `{"":1,"id":2}`, true, "", "", "2", "", ""},
		{"spans", `{"params":{"a":[1,2]},"kind":null}`, true, "", "", "", "null", `{"a":[1,2]}`},
	} {
		var o proto.Object
		err := proto.ScanObject([]byte(tc.in), names, &o)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %q: %v, want ok %v", tc.rule, tc.in, err, tc.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, proto.ErrInvalidEnvelope) {
				t.Errorf("%s: %q: %v is not ErrInvalidEnvelope", tc.rule, tc.in, err)
			}
			continue
		}
		in := []byte(tc.in)
		got := [3]string{string(o.Members[0].Value(in)), string(o.Members[1].Value(in)), string(o.Members[2].Value(in))}
		if o.Duplicate != tc.dup || o.Unknown != tc.unknown || got != [3]string{tc.id, tc.kind, tc.prms} {
			t.Errorf("%s: %q: dup %q unknown %q members %q", tc.rule, tc.in, o.Duplicate, o.Unknown, got)
		}
	}
	if s, ok := proto.StringValue([]byte(`"a\u00e9\n"`)); !ok || s != "aé\n" {
		t.Errorf("StringValue = %q, %v", s, ok)
	}
	if _, ok := proto.StringValue([]byte(`12`)); ok {
		t.Error("StringValue took a number")
	}
}

// FuzzScanObject: ScanObject takes exactly the texts encoding/json takes as one object
// that are also valid UTF-8 (encoding/json replaces invalid UTF-8 instead), and
// reports as duplicate or unknown exactly what a token walk finds.
func FuzzScanObject(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"id":1,"\u0069d":2,"x":{"id":3}}`))
	names := []string{"type", "v", "id", "method", "params"}
	f.Fuzz(func(t *testing.T, in []byte) {
		var o proto.Object
		err := proto.ScanObject(in, names, &o)
		trimmed := bytes.TrimLeft(in, " \t\r\n")
		want := json.Valid(in) && utf8.Valid(in) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != want {
			t.Fatalf("%q: %v, want ok %v", in, err, want)
		}
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		_, _ = dec.Token()
		seen := map[string]bool{}
		dup, unknown, hasUnknown := "", "", false
		for dec.More() {
			tok, _ := dec.Token()
			name := tok.(string)
			var v json.RawMessage
			_ = dec.Decode(&v)
			known := false
			for _, n := range names {
				known = known || n == name
			}
			switch {
			case !known:
				if !hasUnknown {
					unknown, hasUnknown = name, true
				}
			case seen[name]:
				if dup == "" {
					dup = name
				}
			default:
				seen[name] = true
			}
		}
		if dup != o.Duplicate || unknown != o.Unknown || hasUnknown != o.HasUnknown {
			t.Fatalf("%q: dup %q unknown %q, want %q %q", in, o.Duplicate, o.Unknown, dup, unknown)
		}
		for i, n := range names {
			if (o.Members[i].Kind != 0) != seen[n] {
				t.Fatalf("%q: member %s kind %d", in, n, o.Members[i].Kind)
			}
			if v := o.Members[i].Value(in); v != nil && !json.Valid(v) {
				t.Fatalf("%q: member %s span %q", in, n, v)
			}
		}
	})
}

// TestUnknownFieldWithoutName: a member named "" is an unknown field like any other
// (R12), in the adapter protocol's envelopes and in ScanObject's objects; it was once
// taken because "" also meant "no unknown field seen".
func TestUnknownFieldWithoutName(t *testing.T) {
	for _, in := range []string{
		`{"type":"result","v":1,"id":2,"value":1,"":0}`,
		`{"":{},"type":"error","v":1,"id":2,"code":"failed","message":"x"}`,
	} {
		var ee *proto.EnvelopeError
		if _, err := proto.DecodeAdapterMessage([]byte(in)); !errors.As(err, &ee) || ee.Reason != "unknown field" || ee.Field != "" {
			t.Errorf("DecodeAdapterMessage(%s) = %v, want an unknown field", in, err)
		}
	}
	if _, err := proto.DecodeHostMessage([]byte(`{"type":"cancel","v":1,"id":2,"":null}`)); err == nil {
		t.Error("DecodeHostMessage took a member named \"\"")
	}
	var o proto.Object
	if err := proto.ScanObject([]byte(`{"":1,"id":2}`), []string{"id"}, &o); err != nil || !o.HasUnknown || o.Unknown != "" {
		t.Errorf("ScanObject: %v, unknown %q (%v)", err, o.Unknown, o.HasUnknown)
	}
}
