package proto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/internal/proto"
)

var envelopeSeeds = []string{
	`{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`,
	`{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`,
	`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`,
	`{"type":"cancel","v":1,"id":3}`,
	`{"type":"result","v":1,"id":2,"value":1,"extra":true}`,
	`{"type":"result","v":1,"id":1e0,"value":"\u00e9\ud83d\ude00"}`,
	`{"t\u0079pe":"cancel","v":1,"id":9007199254740991}`,
	"{\"type\":\"result\",\"v\":1,\"id\":2,\"value\":\"\xff\"}",
	`[1,2,{"a":[true,false,null,-0.5e+3]}]`,
}

// checkDecoded asserts the invariants of any successful decode: the message re-encodes
// to an envelope that decodes to the same message, and agrees with encoding/json.
func checkDecoded(t *testing.T, in []byte, m proto.Message, decode func([]byte) (proto.Message, error)) {
	if !json.Valid(in) || !utf8.Valid(in) {
		t.Fatalf("accepted invalid JSON or UTF-8: %q", in)
	}
	var re []byte
	switch m.Type {
	case proto.TypeRequest:
		re = proto.AppendRequest(nil, m.ID, m.Method, m.Params)
	case proto.TypeCancel:
		re = proto.AppendCancel(nil, m.ID)
	case proto.TypeResult:
		re = proto.AppendResult(nil, m.ID, m.Value)
	case proto.TypeError:
		re = proto.AppendError(nil, m.ID, m.Code, m.Message)
	default:
		t.Fatalf("decoded type %v", m.Type)
	}
	m2, err := decode(re)
	if err != nil {
		t.Fatalf("re-encoded %s does not decode: %v", re, err)
	}
	if m2.Type != m.Type || m2.ID != m.ID || m2.Method != m.Method || !bytes.Equal(m2.Params, m.Params) ||
		!bytes.Equal(m2.Value, m.Value) || m2.Code != m.Code || m2.Message != m.Message {
		t.Fatalf("round trip changed %+v into %+v", m, m2)
	}
}

func FuzzDecodeAdapterMessage(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := proto.DecodeAdapterMessage(in)
		if err != nil {
			if !errors.Is(err, proto.ErrInvalidEnvelope) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkDecoded(t, in, m, proto.DecodeAdapterMessage)
	})
}

func FuzzDecodeHostMessage(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := proto.DecodeHostMessage(in)
		if err != nil {
			if !errors.Is(err, proto.ErrInvalidEnvelope) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkDecoded(t, in, m, proto.DecodeHostMessage)
	})
}

func FuzzReadFrame(f *testing.F) {
	f.Add(append(header(2), "{}"...))
	f.Add(append(append(header(2), "{}"...), header(0)...))
	f.Add(header(0xffffffff))
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := proto.NewReader(bytes.NewReader(stream), 64)
		total := 0
		for {
			p, err := r.ReadFrame()
			if err != nil {
				var fe *proto.FrameError
				if err != io.EOF && !errors.As(err, &fe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if len(p) == 0 || len(p) > 64 {
				t.Fatalf("frame of %d bytes returned", len(p))
			}
			total += 4 + len(p)
			if total > len(stream) {
				t.Fatal("returned more than the stream held")
			}
		}
	})
}

func FuzzDecodeCatalog(f *testing.F) {
	f.Add([]byte(`{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}`))
	f.Add([]byte(`{"protocol":1,"services":[{"id":"system.x","version":1,"methods":["system.x.y"]}]}`))
	f.Add([]byte(`{"protocol":1,"services":[{"id":"a.b","version":1,"methods":["a.b.c","a.b.c"]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := proto.DecodeCatalog(in)
		if err != nil {
			if !errors.Is(err, proto.ErrInvalidCatalog) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := proto.ValidateCatalog(c); err != nil {
			t.Fatalf("accepted catalog does not validate: %v", err)
		}
		out, err := proto.AppendCatalog(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := proto.DecodeCatalog(out)
		if err != nil {
			t.Fatalf("re-encoded catalog %s rejected: %v", out, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("re-encoded catalog %s decodes to %+v, not %+v", out, back, c)
		}
		// The same value encoding/json would give.
		var viaJSON, want any
		std, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &viaJSON); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaJSON, want) {
			t.Fatalf("AppendCatalog gave %s, encoding/json %s", out, std)
		}
	})
}

func FuzzDecodeInitializeParams(f *testing.F) {
	f.Add([]byte(`{"protocol":1,"configuration":{}}`))
	f.Add([]byte(`{"protocol":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		cfg, err := proto.DecodeInitializeParams(in)
		if err != nil {
			if !errors.Is(err, proto.ErrInvalidEnvelope) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := proto.ValidateParams(cfg); err != nil || len(cfg) == 0 {
			t.Fatalf("configuration %q is not an object: %v", cfg, err)
		}
	})
}
