package controlplane

import (
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
)

// The envelope rules of docs/control-plane.md ("Strict decoding"), one table each:
// the rule's name, then bodies it refuses and bodies it takes.

const ruleID = "6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80"

// req builds a request body around members (without the braces).
func req(members string) string { return `{` + members + `}` }

const idKind = `"id":"` + ruleID + `","kind":"request"`

type ruleCase struct {
	rule, name string
	body       string
	ok         bool
	echo       string // the id answered with, when refused
}

func TestEnvelopeRules(t *testing.T) {
	for _, tc := range []ruleCase{
		// one object: a body is exactly one JSON object, whitespace around it allowed.
		{"one object", "empty", ``, false, ""},
		{"one object", "array", `[]`, false, ""},
		{"one object", "two objects", req(idKind+`,"method":"Ping"`) + `{}`, false, ""},
		{"one object", "truncated", `{"id":"` + ruleID + `"`, false, ""},
		{"one object", "whitespace around", " \n" + req(idKind+`,"method":"Ping"`) + "\t ", true, ""},
		// utf-8: every byte of the body is valid UTF-8, escapes well formed; nothing is
		// replaced.
		{"utf-8", "invalid byte in the method", req(idKind + `,"method":"Pi` + "\xff" + `ng"`), false, ""},
		{"utf-8", "invalid byte in a key", req(idKind + `,"method":"Ping","` + "\xc3" + `":1`), false, ""},
		{"utf-8", "overlong encoding in params", req(idKind + `,"method":"Ping","params":{"a":"` + "\xc0\xaf" + `"}`), false, ""},
		{"utf-8", "surrogate half in params", req(idKind + `,"method":"Ping","params":{"a":"` + "\xed\xa0\x80" + `"}`), false, ""},
		{"utf-8", "deep in Send's adapter params", req(idKind + `,"method":"Send","params":{"adapter":"a","method":"b.c","params":{"x":[{"y":"` + "\xfe" + `"}]}}`), false, ""},
		{"utf-8", "bad escape", req(idKind + `,"method":"Ping\x"`), false, ""},
		{"utf-8", "control character in a string", req(idKind + `,"method":"Pi` + "\n" + `ng"`), false, ""},
		{"utf-8", "valid multibyte text", req(idKind + `,"method":"Ping","params":{}`), true, ""},
		// exact names: field names match exactly, letter case included; an escaped
		// name counts by what it spells.
		{"exact names", "Method", req(idKind + `,"Method":"Ping"`), false, ruleID},
		{"exact names", "KIND", `{"id":"` + ruleID + `","KIND":"request","method":"Ping"}`, false, ruleID},
		{"exact names", "Id", `{"Id":"` + ruleID + `","kind":"request","method":"Ping"}`, false, ""},
		{"exact names", "Params", req(idKind + `,"method":"Ping","Params":{}`), false, ruleID},
		{"exact names", "escaped method", req(idKind + `,"\u006dethod":"Ping"`), true, ""},
		// once: no field is given twice.
		{"once", "method twice", req(idKind + `,"method":"Ping","method":"Version"`), false, ruleID},
		{"once", "kind twice", req(idKind + `,"kind":"request","method":"Ping"`), false, ruleID},
		{"once", "params twice", req(idKind + `,"method":"Ping","params":{},"params":{}`), false, ruleID},
		{"once", "id twice", req(idKind + `,"id":"` + ruleID + `","method":"Ping"`), false, ruleID},
		{"once", "twice under two spellings", req(idKind + `,"method":"Ping","\u006dethod":"Version"`), false, ruleID},
		// known fields: no field the envelope does not have.
		{"known fields", "extra", req(idKind + `,"method":"Ping","extra":1`), false, ruleID},
		{"known fields", "request with a result", req(idKind + `,"method":"Ping","result":{}`), false, ruleID},
		// types: id a UUID v4 string, kind "request", method a non-empty string,
		// params an object or null.
		{"types", "id a number", `{"id":7,"kind":"request","method":"Ping"}`, false, ""},
		{"types", "params an array", req(idKind + `,"method":"Ping","params":[]`), false, ruleID},
		{"types", "params null", req(idKind + `,"method":"Ping","params":null`), true, ""},
	} {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			env, echo, err := decodeRequest([]byte(tc.body))
			if !tc.ok {
				if err == nil || err.Code != CodeInvalidParams {
					t.Fatalf("decoded %+v (%v), want invalid_params", env, err)
				}
				if echo != tc.echo {
					t.Errorf("answered with id %q, want %q", echo, tc.echo)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if env.ID != ruleID || env.Method == "" {
				t.Fatalf("decoded %+v", env)
			}
		})
	}
}

// TestParamsRules: the same rules hold in params, at every level of their value (the
// codec's, as an adapter applies them to its params); Send's own fields likewise.
func TestParamsRules(t *testing.T) {
	type nested struct {
		Inner struct {
			Name string `json:"name"`
		} `json:"inner"`
		List []struct {
			N int `json:"n"`
		} `json:"list"`
	}
	for _, tc := range []struct {
		rule, params string
		ok           bool
	}{
		{"exact names", `{"Inner":{}}`, false},
		{"exact names", `{"inner":{"Name":"x"}}`, false},
		{"exact names", `{"list":[{"N":1}]}`, false},
		{"once", `{"inner":{},"inner":{}}`, false},
		{"once", `{"inner":{"name":"a","name":"b"}}`, false},
		{"once", `{"list":[{"n":1,"n":2}]}`, false},
		{"known fields", `{"inner":{"other":1}}`, false},
		{"types", `{"list":[{"n":1.5}]}`, false},
		{"types", `{"inner":{"name":1}}`, false},
		{"taken", `{"inner":{"name":"a"},"list":[{"n":1},{"n":2}]}`, true},
		{"taken", `null`, true},
	} {
		var v nested
		err := decodeParams([]byte(tc.params), &v)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %s: %v, want ok %v", tc.rule, tc.params, err, tc.ok)
		}
		if err != nil && err.Code != CodeInvalidParams {
			t.Errorf("%s: code %s", tc.params, err.Code)
		}
	}
	for _, tc := range []struct {
		rule, params string
		ok           bool
	}{
		{"exact names", `{"Adapter":"a","method":"b.c"}`, false},
		{"exact names", `{"adapter":"a","method":"b.c","Timeout_ms":5}`, false},
		{"once", `{"adapter":"a","adapter":"b","method":"b.c"}`, false},
		{"once", `{"adapter":"a","method":"b.c","params":{},"params":{}}`, false},
		{"once", `{"adapter":"a","\u0061dapter":"b","method":"b.c"}`, false},
		{"known fields", `{"adapter":"a","method":"b.c","extra":1}`, false},
		{"types", `{"adapter":1,"method":"b.c"}`, false},
		{"types", `{"adapter":"a","method":"b.c","timeout_ms":"5"}`, false},
		{"types", `{"adapter":"a","method":"b.c","timeout_ms":1.5}`, false},
		// The adapter's params are the adapter's: kept as text, checked here for UTF-8
		// and syntax (the envelope), and by the adapter's decoder for the rest.
		{"taken", `{"adapter":"a","method":"b.c","params":{"A":1,"A":2},"timeout_ms":5}`, true},
	} {
		w, err := decodeSend([]byte(tc.params))
		if (err == nil) != tc.ok {
			t.Errorf("Send %s: %s: %v, want ok %v", tc.rule, tc.params, err, tc.ok)
		}
		if tc.ok && (w.Adapter == nil || *w.Adapter != "a" || string(w.Params) != `{"A":1,"A":2}`) {
			t.Errorf("Send %s: decoded %+v", tc.params, w)
		}
	}
}

// TestAnswerRules: the client applies the rules to what the daemon sends, and at every
// level of a result (ignoring fields it does not know, which a newer daemon may add).
func TestAnswerRules(t *testing.T) {
	for _, tc := range []struct {
		rule, name, body string
		ok               bool
	}{
		{"once", "result twice", `{"id":"x","kind":"response","result":{},"result":{"a":1}}`, false},
		{"once", "kind twice", `{"id":"x","kind":"event","kind":"response","result":{}}`, false},
		{"exact names", "Result", `{"id":"x","kind":"response","Result":{}}`, false},
		{"exact names", "error's Code", `{"id":"x","kind":"response","error":{"Code":"internal","message":"m"}}`, false},
		{"once", "error's code twice", `{"id":"x","kind":"response","error":{"code":"internal","code":"not_found","message":"m"}}`, false},
		{"utf-8", "invalid byte in a result", `{"id":"x","kind":"response","result":{"a":"` + "\xff" + `"}}`, false},
		{"known fields", "extra", `{"id":"x","kind":"response","result":{},"extra":1}`, false},
		{"types", "response with params", `{"id":"x","kind":"response","result":{},"params":{}}`, false},
		{"types", "response with neither", `{"id":"x","kind":"response"}`, false},
		{"types", "event without params", `{"id":"x","kind":"event","method":"Discover"}`, false},
		{"types", "request", `{"id":"x","kind":"request","method":"Ping"}`, false},
		{"taken", "response", `{"id":"x","kind":"response","result":{"a":1}}`, true},
		{"taken", "error with unknown detail fields", `{"id":"x","kind":"response","error":{"code":"internal","message":"m","details":{"new":1},"hint":"h"}}`, true},
		{"taken", "event", `{"id":"x","kind":"event","method":"Discover","params":{}}`, true},
	} {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			_, err := decodeAnswer([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("%v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrProtocol) {
				t.Fatalf("%v is not ErrProtocol", err)
			}
		})
	}
	// A result whose fields repeat, or whose names are another case, is refused by the
	// typed methods; one with fields this client does not know is taken.
	for _, tc := range []struct {
		result string
		ok     bool
	}{
		{`{"daemon":"a","daemon":"b","protocol":1}`, false},
		{`{"Daemon":"b","daemon":"a","protocol":1}`, true}, // Daemon is not daemon: an unknown field
		{`{"daemon":"a","protocol":1,"added_later":{"x":1}}`, true},
		{`{"daemon":"a","protocol":1,"added_later":{"x":1,"x":2}}`, false},
	} {
		c := fakeDaemon(t, func(nc net.Conn, r envelope) {
			body := `{"id":"` + r.ID + `","kind":"response","result":` + tc.result + `}`
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
			_, _ = nc.Write(append(hdr[:], body...))
		})
		v, err := c.Version(testCtx(t))
		if (err == nil) != tc.ok {
			t.Errorf("result %s: %+v, %v; want ok %v", tc.result, v, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Errorf("result %s: %v is not ErrProtocol", tc.result, err)
		}
		if err == nil && (v.Daemon != "a" || !strings.Contains(tc.result, `"daemon":"a"`)) {
			t.Errorf("result %s: %+v", tc.result, v)
		}
	}
}
