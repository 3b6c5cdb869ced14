package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/runtime/wire"
)

func TestDecodeAdapterMessage(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	tests := []struct {
		rule    string
		in      string
		want    wire.Message
		wantErr string // the field named by the error, or "syntax"
	}{
		{"R11", `{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`, wire.Message{Type: wire.TypeResult, ID: 2, Value: []byte(`{"celsius":21.5}`)}, ""},
		{"R11", `{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`, wire.Message{Type: wire.TypeError, ID: 3, Code: wire.CodeAborted, RawCode: "aborted", Message: "Read canceled"}, ""},
		{"A2", " \n{\"v\":1,\"value\":null,\"id\":7,\"type\":\"result\"}\t", wire.Message{Type: wire.TypeResult, ID: 7, Value: []byte("null")}, ""},
		{"R11", `{"type":"result","v":1,"id":2,"value":[1,"a",{"b":false}]}`, wire.Message{Type: wire.TypeResult, ID: 2, Value: []byte(`[1,"a",{"b":false}]`)}, ""},
		{"R14", `{"type":"result","v":1,"id":9007199254740991,"value":1}`, wire.Message{Type: wire.TypeResult, ID: 9007199254740991, Value: []byte("1")}, ""},
		{"R29", `{"type":"error","v":1,"id":3,"code":"Busy","message":"x"}`, wire.Message{Type: wire.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "Busy", Message: "x"}, ""},
		{"R29", `{"type":"error","v":1,"id":3,"code":"teapot","message":""}`, wire.Message{Type: wire.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "teapot"}, ""},
		{"R31", `{"type":"error","v":1,"id":3,"code":"failed","message":"` + long + `"}`, wire.Message{Type: wire.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "failed", Message: long[:4096]}, ""},
		{"R11", `{"type":"error","v":1,"id":3,"code":"fail\u0065d","message":"a\nb"}`, wire.Message{Type: wire.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "failed", Message: "a\nb"}, ""},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"extra":true}`, wire.Message{}, "extra"},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"t\u0079pe":"result"}`, wire.Message{}, "type"},
		{"R11", `{"type":"result","v":1,"id":2}`, wire.Message{}, "value"},
		{"R11", `{"type":"result","v":1,"id":2,"value":1,"message":"x"}`, wire.Message{}, "message"},
		{"R11", `{"type":"error","v":1,"id":2,"code":"failed"}`, wire.Message{}, "message"},
		{"R11", `{"type":"error","v":1,"id":2,"code":5,"message":"x"}`, wire.Message{}, "code"},
		{"R11", `{"type":"error","v":1,"id":2,"code":"failed","message":null}`, wire.Message{}, "message"},
		{"R10", `{"type":"request","v":1,"id":2,"method":"a.b","params":{}}`, wire.Message{}, "type"},
		{"R10", `{"type":"cancel","v":1,"id":2}`, wire.Message{}, "type"},
		{"R9", `{"type":"event","v":1,"id":2}`, wire.Message{}, "type"},
		{"R9", `{"type":1,"v":1,"id":2,"value":1}`, wire.Message{}, "type"},
		{"R9", `{"v":1,"id":2,"value":1}`, wire.Message{}, "type"},
		{"R13", `{"type":"result","v":2,"id":2,"value":1}`, wire.Message{}, "v"},
		{"R13", `{"type":"result","v":1.0,"id":2,"value":1}`, wire.Message{}, "v"},
		{"R13", `{"type":"result","v":"1","id":2,"value":1}`, wire.Message{}, "v"},
		{"R13", `{"type":"result","id":2,"value":1}`, wire.Message{}, "v"},
		{"R14", `{"type":"result","v":1,"id":0,"value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":-1,"value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":1.0,"value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":1e0,"value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":"1","value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":9007199254740992,"value":1}`, wire.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":99999999999999999999,"value":1}`, wire.Message{}, "id"},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"value":2}`, wire.Message{}, "value"},
		{"R2", `[{"type":"result","v":1,"id":2,"value":1}]`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":1}{}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":1`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":tru}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":01}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"a` + "\x01" + `"}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"` + "\xff\xfe" + `"}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"\x"}`, wire.Message{}, "syntax"},
		{"R2", "\xef\xbb\xbf" + `{"type":"result","v":1,"id":2,"value":1}`, wire.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, wire.Message{}, "syntax"},
		{"R2", ``, wire.Message{}, "syntax"},
	}
	for _, tt := range tests {
		name := tt.rule + " " + tt.in
		if len(name) > 90 {
			name = name[:90]
		}
		t.Run(name, func(t *testing.T) {
			got, err := wire.DecodeAdapterMessage([]byte(tt.in))
			if tt.wantErr != "" {
				var ee *wire.EnvelopeError
				if !errors.As(err, &ee) || !errors.Is(err, wire.ErrInvalidEnvelope) {
					t.Fatalf("err = %v, want an *EnvelopeError", err)
				}
				if tt.wantErr == "syntax" {
					if ee.Err == nil {
						t.Fatalf("err = %v, want a syntax error", err)
					}
				} else if ee.Field != tt.wantErr {
					t.Fatalf("err field = %q (%v), want %q", ee.Field, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != tt.want.Type || got.ID != tt.want.ID || !bytes.Equal(got.Value, tt.want.Value) ||
				got.Code != tt.want.Code || got.RawCode != tt.want.RawCode || got.Message != tt.want.Message {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeHostMessage(t *testing.T) {
	tests := []struct {
		rule      string
		in        string
		want      wire.Message
		wantField string
		wantID    uint64
	}{
		{"R11", `{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`, wire.Message{Type: wire.TypeRequest, ID: 2, Method: "example.device.read", Params: []byte(`{"probe":"inlet"}`)}, "", 0},
		{"R11", `{"type":"cancel","v":1,"id":3}`, wire.Message{Type: wire.TypeCancel, ID: 3}, "", 0},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b","params":{},"x":1}`, wire.Message{}, "x", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b","params":[]}`, wire.Message{}, "params", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b"}`, wire.Message{}, "params", 4},
		{"A4", `{"type":"request","v":1,"id":4,"params":{}}`, wire.Message{}, "method", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":1,"params":{}}`, wire.Message{}, "method", 4},
		{"A4", `{"type":"cancel","v":1,"id":4,"value":1}`, wire.Message{}, "value", 4},
		{"R10", `{"type":"result","v":1,"id":4,"value":1}`, wire.Message{}, "type", 4},
		{"R14", `{"type":"cancel","v":1,"id":0}`, wire.Message{}, "id", 0},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+tt.in, func(t *testing.T) {
			got, err := wire.DecodeHostMessage([]byte(tt.in))
			if tt.wantField != "" {
				var ee *wire.EnvelopeError
				if !errors.As(err, &ee) || ee.Field != tt.wantField || ee.ID != tt.wantID {
					t.Fatalf("err = %#v, want field %q id %d", err, tt.wantField, tt.wantID)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != tt.want.Type || got.ID != tt.want.ID || got.Method != tt.want.Method || !bytes.Equal(got.Params, tt.want.Params) {
				t.Fatalf("got %+v want %+v", got, tt.want)
			}
		})
	}
}

// The spec's example exchange, byte for byte (R11, R17).
func TestEncodeSpecExample(t *testing.T) {
	tests := []struct {
		got  []byte
		want string
	}{
		{wire.AppendRequest(nil, 1, wire.MethodInitialize, wire.AppendInitializeParams(nil, nil)),
			`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`},
		{wire.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}`)),
			`{"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}`},
		{wire.AppendRequest(nil, 2, "example.device.read", []byte(`{"probe":"inlet"}`)),
			`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`},
		{wire.AppendResult(nil, 2, []byte(`{"celsius":21.5}`)), `{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`},
		{wire.AppendCancel(nil, 3), `{"type":"cancel","v":1,"id":3}`},
		{wire.AppendError(nil, 3, wire.CodeAborted, "Read canceled"), `{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`},
		{wire.AppendError(nil, 4, wire.Code("nope"), "a\"b\\c\n\x01\xff"), `{"type":"error","v":1,"id":4,"code":"failed","message":"a\"b\\c\n\u0001\ufffd"}`},
		{wire.AppendResult(nil, 5, nil), `{"type":"result","v":1,"id":5,"value":null}`},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
	cat, err := wire.AppendCatalog(nil, &wire.Catalog{Protocol: 1, Services: []wire.Service{{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}}}})
	if err != nil || string(cat) != `{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}` {
		t.Errorf("catalog = %s, %v", cat, err)
	}
}

// Everything the encoders produce decodes back to the same message (R11).
func TestRoundTrip(t *testing.T) {
	msg := strings.Repeat("ü", 2100) // 4200 bytes: capped on the way out (R30)
	e, err := wire.DecodeAdapterMessage(wire.AppendError(nil, 9, wire.CodeBusy, msg))
	if err != nil || e.Code != wire.CodeBusy || len(e.Message) != 4096 || e.Message != msg[:4096] {
		t.Fatalf("error round trip: %v %d", err, len(e.Message))
	}
	r, err := wire.DecodeHostMessage(wire.AppendRequest(nil, 1<<53-1, "a.\"b\"", []byte(`{"k":[1,2]}`)))
	if err != nil || r.ID != 1<<53-1 || r.Method != `a."b"` || string(r.Params) != `{"k":[1,2]}` {
		t.Fatalf("request round trip: %+v %v", r, err)
	}
	// A 1 MiB string value survives untouched.
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	v, err := wire.DecodeAdapterMessage(wire.AppendResult(nil, 3, big))
	if err != nil || !bytes.Equal(v.Value, big) {
		t.Fatalf("big value: %v", err)
	}
}

func TestValidateParams(t *testing.T) {
	for _, ok := range []string{``, `{}`, ` {"a":[1,{"b":null}]} `} {
		if err := wire.ValidateParams([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{`[]`, `1`, `{`, `{"a":1}x`, "{\"a\":\"\xff\"}", `null`} {
		if err := wire.ValidateParams([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, ok := range []string{`null`, `1`, `"x"`, `[1]`, `{}`} {
		if err := wire.ValidateValue([]byte(ok)); err != nil {
			t.Errorf("value %q: %v", ok, err)
		}
	}
	if err := wire.ValidateValue([]byte(`1 2`)); err == nil {
		t.Error("two values accepted")
	}
}

func TestCodes(t *testing.T) {
	// R28: exactly eight codes.
	for _, c := range wire.Codes {
		if !c.Valid() || wire.NormalizeCode(string(c)) != c {
			t.Errorf("%q not valid", c)
		}
	}
	// R29, A21: anything else, case included, becomes failed.
	for _, s := range []string{"", "Busy", "BUSY", "timeout", "unknown", " busy"} {
		if wire.NormalizeCode(s) != wire.CodeFailed {
			t.Errorf("%q not normalized to failed", s)
		}
	}
	// R31, A20: cap at 4096 bytes on a character boundary.
	for _, s := range []string{strings.Repeat("a", 5000), strings.Repeat("€", 2000), "x" + strings.Repeat("😀", 1200)} {
		got := wire.TruncateMessage(s)
		if len(got) > 4096 || len(got) < 4093 || !strings.HasPrefix(s, got) || !utf8Valid(got) {
			t.Errorf("truncate(%d bytes) = %d bytes", len(s), len(got))
		}
	}
	if wire.TruncateMessage("short") != "short" {
		t.Error("short message changed")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
