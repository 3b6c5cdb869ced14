package proto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

func TestDecodeAdapterMessage(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	tests := []struct {
		rule    string
		in      string
		want    proto.Message
		wantErr string // the field named by the error, or "syntax"
	}{
		{"R11", `{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`, proto.Message{Type: proto.TypeResult, ID: 2, Value: []byte(`{"celsius":21.5}`)}, ""},
		{"R11", `{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`, proto.Message{Type: proto.TypeError, ID: 3, Code: wire.CodeAborted, RawCode: "aborted", Message: "Read canceled"}, ""},
		{"A2", " \n{\"v\":1,\"value\":null,\"id\":7,\"type\":\"result\"}\t", proto.Message{Type: proto.TypeResult, ID: 7, Value: []byte("null")}, ""},
		{"R11", `{"type":"result","v":1,"id":2,"value":[1,"a",{"b":false}]}`, proto.Message{Type: proto.TypeResult, ID: 2, Value: []byte(`[1,"a",{"b":false}]`)}, ""},
		{"R14", `{"type":"result","v":1,"id":9007199254740991,"value":1}`, proto.Message{Type: proto.TypeResult, ID: 9007199254740991, Value: []byte("1")}, ""},
		{"R29", `{"type":"error","v":1,"id":3,"code":"Busy","message":"x"}`, proto.Message{Type: proto.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "Busy", Message: "x"}, ""},
		{"R29", `{"type":"error","v":1,"id":3,"code":"teapot","message":""}`, proto.Message{Type: proto.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "teapot"}, ""},
		{"R31", `{"type":"error","v":1,"id":3,"code":"failed","message":"` + long + `"}`, proto.Message{Type: proto.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "failed", Message: long[:4096]}, ""},
		{"R11", `{"type":"error","v":1,"id":3,"code":"fail\u0065d","message":"a\nb"}`, proto.Message{Type: proto.TypeError, ID: 3, Code: wire.CodeFailed, RawCode: "failed", Message: "a\nb"}, ""},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"extra":true}`, proto.Message{}, "extra"},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"t\u0079pe":"result"}`, proto.Message{}, "type"},
		{"R11", `{"type":"result","v":1,"id":2}`, proto.Message{}, "value"},
		{"R11", `{"type":"result","v":1,"id":2,"value":1,"message":"x"}`, proto.Message{}, "message"},
		{"R11", `{"type":"error","v":1,"id":2,"code":"failed"}`, proto.Message{}, "message"},
		{"R11", `{"type":"error","v":1,"id":2,"code":5,"message":"x"}`, proto.Message{}, "code"},
		{"R11", `{"type":"error","v":1,"id":2,"code":"failed","message":null}`, proto.Message{}, "message"},
		{"R10", `{"type":"request","v":1,"id":2,"method":"a.b","params":{}}`, proto.Message{}, "type"},
		{"R10", `{"type":"cancel","v":1,"id":2}`, proto.Message{}, "type"},
		{"R9", `{"type":"event","v":1,"id":2}`, proto.Message{}, "type"},
		{"R9", `{"type":1,"v":1,"id":2,"value":1}`, proto.Message{}, "type"},
		{"R9", `{"v":1,"id":2,"value":1}`, proto.Message{}, "type"},
		{"R13", `{"type":"result","v":2,"id":2,"value":1}`, proto.Message{}, "v"},
		{"R13", `{"type":"result","v":1.0,"id":2,"value":1}`, proto.Message{}, "v"},
		{"R13", `{"type":"result","v":"1","id":2,"value":1}`, proto.Message{}, "v"},
		{"R13", `{"type":"result","id":2,"value":1}`, proto.Message{}, "v"},
		{"R14", `{"type":"result","v":1,"id":0,"value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":-1,"value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":1.0,"value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":1e0,"value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":"1","value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":9007199254740992,"value":1}`, proto.Message{}, "id"},
		{"R14", `{"type":"result","v":1,"id":99999999999999999999,"value":1}`, proto.Message{}, "id"},
		{"R12", `{"type":"result","v":1,"id":2,"value":1,"value":2}`, proto.Message{}, "value"},
		{"R2", `[{"type":"result","v":1,"id":2,"value":1}]`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":1}{}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":1`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":tru}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":01}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"a` + "\x01" + `"}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"` + "\xff\xfe" + `"}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":"\x"}`, proto.Message{}, "syntax"},
		{"R2", "\xef\xbb\xbf" + `{"type":"result","v":1,"id":2,"value":1}`, proto.Message{}, "syntax"},
		{"R2", `{"type":"result","v":1,"id":2,"value":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, proto.Message{}, "syntax"},
		{"R2", ``, proto.Message{}, "syntax"},
	}
	for _, tt := range tests {
		name := tt.rule + " " + tt.in
		if len(name) > 90 {
			name = name[:90]
		}
		t.Run(name, func(t *testing.T) {
			got, err := proto.DecodeAdapterMessage([]byte(tt.in))
			if tt.wantErr != "" {
				var ee *proto.EnvelopeError
				if !errors.As(err, &ee) || !errors.Is(err, proto.ErrInvalidEnvelope) {
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
		want      proto.Message
		wantField string
		wantID    uint64
	}{
		{"R11", `{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`, proto.Message{Type: proto.TypeRequest, ID: 2, Method: "example.device.read", Params: []byte(`{"probe":"inlet"}`)}, "", 0},
		{"R11", `{"type":"cancel","v":1,"id":3}`, proto.Message{Type: proto.TypeCancel, ID: 3}, "", 0},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b","params":{},"x":1}`, proto.Message{}, "x", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b","params":[]}`, proto.Message{}, "params", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":"a.b"}`, proto.Message{}, "params", 4},
		{"A4", `{"type":"request","v":1,"id":4,"params":{}}`, proto.Message{}, "method", 4},
		{"A4", `{"type":"request","v":1,"id":4,"method":1,"params":{}}`, proto.Message{}, "method", 4},
		{"A4", `{"type":"cancel","v":1,"id":4,"value":1}`, proto.Message{}, "value", 4},
		{"R10", `{"type":"result","v":1,"id":4,"value":1}`, proto.Message{}, "type", 4},
		{"R14", `{"type":"cancel","v":1,"id":0}`, proto.Message{}, "id", 0},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+tt.in, func(t *testing.T) {
			got, err := proto.DecodeHostMessage([]byte(tt.in))
			if tt.wantField != "" {
				var ee *proto.EnvelopeError
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
		{proto.AppendRequest(nil, 1, proto.MethodInitialize, proto.AppendInitializeParams(nil, nil)),
			`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`},
		{proto.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}`)),
			`{"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}`},
		{proto.AppendRequest(nil, 2, "example.device.read", []byte(`{"probe":"inlet"}`)),
			`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`},
		{proto.AppendResult(nil, 2, []byte(`{"celsius":21.5}`)), `{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`},
		{proto.AppendCancel(nil, 3), `{"type":"cancel","v":1,"id":3}`},
		{proto.AppendError(nil, 3, wire.CodeAborted, "Read canceled"), `{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`},
		{proto.AppendError(nil, 4, wire.Code("nope"), "a\"b\\c\n\x01\xff"), `{"type":"error","v":1,"id":4,"code":"failed","message":"a\"b\\c\n\u0001\ufffd"}`},
		{proto.AppendResult(nil, 5, nil), `{"type":"result","v":1,"id":5,"value":null}`},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
	cat, err := proto.AppendCatalog(nil, &wire.Catalog{Protocol: 1, Services: []wire.Service{{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}}}})
	if err != nil || string(cat) != `{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}` {
		t.Errorf("catalog = %s, %v", cat, err)
	}
}

// Everything the encoders produce decodes back to the same message (R11).
func TestRoundTrip(t *testing.T) {
	msg := strings.Repeat("ü", 2100) // 4200 bytes: capped on the way out (R30)
	e, err := proto.DecodeAdapterMessage(proto.AppendError(nil, 9, wire.CodeBusy, msg))
	if err != nil || e.Code != wire.CodeBusy || len(e.Message) != 4096 || e.Message != msg[:4096] {
		t.Fatalf("error round trip: %v %d", err, len(e.Message))
	}
	r, err := proto.DecodeHostMessage(proto.AppendRequest(nil, 1<<53-1, "a.\"b\"", []byte(`{"k":[1,2]}`)))
	if err != nil || r.ID != 1<<53-1 || r.Method != `a."b"` || string(r.Params) != `{"k":[1,2]}` {
		t.Fatalf("request round trip: %+v %v", r, err)
	}
	// A 1 MiB string value survives untouched.
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	v, err := proto.DecodeAdapterMessage(proto.AppendResult(nil, 3, big))
	if err != nil || !bytes.Equal(v.Value, big) {
		t.Fatalf("big value: %v", err)
	}
}

func TestValidateParams(t *testing.T) {
	for _, ok := range []string{``, `{}`, ` {"a":[1,{"b":null}]} `} {
		if err := proto.ValidateParams([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{`[]`, `1`, `{`, `{"a":1}x`, "{\"a\":\"\xff\"}", `null`} {
		if err := proto.ValidateParams([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, ok := range []string{`null`, `1`, `"x"`, `[1]`, `{}`} {
		if err := proto.ValidateValue([]byte(ok)); err != nil {
			t.Errorf("value %q: %v", ok, err)
		}
	}
	if err := proto.ValidateValue([]byte(`1 2`)); err == nil {
		t.Error("two values accepted")
	}
}

func TestCodes(t *testing.T) {
	// R28: exactly eight codes.
	for _, c := range proto.Codes {
		if !proto.ValidCode(c) || proto.NormalizeCode(string(c)) != c {
			t.Errorf("%q not valid", c)
		}
	}
	// R29, A21: anything else, case included, becomes failed.
	for _, s := range []string{"", "Busy", "BUSY", "timeout", "unknown", " busy"} {
		if proto.NormalizeCode(s) != wire.CodeFailed {
			t.Errorf("%q not normalized to failed", s)
		}
	}
	// R31, A20: cap at 4096 bytes on a character boundary.
	for _, s := range []string{strings.Repeat("a", 5000), strings.Repeat("€", 2000), "x" + strings.Repeat("😀", 1200)} {
		got := proto.TruncateMessage(s)
		if len(got) > 4096 || len(got) < 4093 || !strings.HasPrefix(s, got) || !utf8Valid(got) {
			t.Errorf("truncate(%d bytes) = %d bytes", len(s), len(got))
		}
	}
	if proto.TruncateMessage("short") != "short" {
		t.Error("short message changed")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// AppendCatalog writes what encoding/json writes for a catalog, byte for byte, for the
// names a valid catalog can hold, nil slices included.
func TestAppendCatalogMatchesEncodingJSON(t *testing.T) {
	tests := []*wire.Catalog{
		{Protocol: 1, Services: []wire.Service{{ID: "example.device", Version: 1, Methods: []string{"example.device.read"}}}},
		{Protocol: 1, Services: []wire.Service{
			{ID: "a.b", Version: 2, Methods: []string{"a.b.c", "a.b.d_e-f"}},
			{ID: "x.y", Version: 30, Methods: []string{}},
			{ID: "z", Version: 0, Methods: nil},
		}},
		{Protocol: 1, Services: []wire.Service{}},
		{Protocol: 1},
	}
	for _, c := range tests {
		got, err := proto.AppendCatalog([]byte("prefix"), c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("AppendCatalog(%+v) = %s, want prefix%s", c, got, want)
		}
	}
}
