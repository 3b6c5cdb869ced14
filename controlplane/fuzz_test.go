package controlplane

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
)

func fuzzFrame(body string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// FuzzFrameReader: any byte stream yields whole frames within the cap, then io.EOF or
// a typed *proto.FrameError; it never returns more than the stream held.
func FuzzFrameReader(f *testing.F) {
	f.Add(fuzzFrame(`{"id":"x","kind":"request","method":"Ping"}`))
	f.Add(append(fuzzFrame(`{}`), fuzzFrame(``)...))
	f.Add(binary.BigEndian.AppendUint32(nil, limits.ControlMaxFrameSize+1))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := &frameReader{r: bytes.NewReader(stream)}
		total := 0
		for {
			body, err := r.read()
			if err != nil {
				var fe *proto.FrameError
				if err != io.EOF && !errors.As(err, &fe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if len(body) > limits.ControlMaxFrameSize {
				t.Fatalf("body of %d bytes", len(body))
			}
			total += headerSize + len(body)
			if total > len(stream) {
				t.Fatal("returned more than the stream held")
			}
			again, err := proto.AppendFrame(nil, body, maxFrame, true)
			if err != nil || !bytes.Equal(again, stream[total-headerSize-len(body):total]) {
				t.Fatalf("re-framing differs: %v", err)
			}
		}
	})
}

// FuzzDecodeRequest: a body is either a valid request (UUID v4 id, kind request, a
// method, params an object or absent) or an invalid_params error — never a panic. What
// is taken obeys the envelope rules, checked here without the decoder's scanner: the
// body is valid JSON and valid UTF-8, and its envelope names each field at most once,
// exactly as the schema spells it. Send's params decode the same way.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","method":"Ping"}`))
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","method":"Send","params":{"adapter":"echo","method":"example.echo.echo","params":{"a":[1,"\u00e9"]},"timeout_ms":5}}`))
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","method":"Ping","method":"Version"}`))
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","\u006dethod":"Ping","Method":"x"}`))
	f.Add([]byte("{\"id\":\"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80\",\"kind\":\"request\",\"method\":\"P\xffing\"}"))
	f.Add([]byte(`{"id":"nope","kind":"response","result":{}}`))
	f.Add([]byte(`{"id":"x","kind":"request","method":"Ping","extra":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env, echo, cerr := decodeRequest(body)
		if len(echo) > maxEchoedID {
			t.Fatalf("echoed id of %d bytes", len(echo))
		}
		if cerr != nil {
			if cerr.Code != CodeInvalidParams {
				t.Fatalf("code %q", cerr.Code)
			}
			return
		}
		if !validID(env.ID) || env.Kind != kindRequest || env.Method == "" {
			t.Fatalf("accepted %+v", env)
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid UTF-8 JSON: %q", body)
		}
		checkOnce(t, body, envelopeNames)
		if env.Params != nil && string(env.Params) != "null" && (!json.Valid(env.Params) || env.Params[0] != '{') {
			t.Fatalf("params %q", env.Params)
		}
		if w, perr := decodeSend(env.Params); perr != nil {
			if perr.Code != CodeInvalidParams {
				t.Fatalf("params code %q", perr.Code)
			}
		} else {
			if len(env.Params) > 0 && string(env.Params) != "null" {
				checkOnce(t, env.Params, sendNames)
			}
			if w.Params != nil && !json.Valid(w.Params) {
				t.Fatalf("adapter params %q", w.Params)
			}
		}
		if _, err := json.Marshal(env); err != nil {
			t.Fatalf("accepted envelope does not re-encode: %v", err)
		}
	})
}

// FuzzDecodeAnswer: what the client takes from a daemon obeys the same rules.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"x","kind":"response","result":{"server_time":"2026-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"id":"x","kind":"response","error":{"code":"internal","message":"m","details":{"a":1}}}`))
	f.Add([]byte(`{"id":"x","kind":"event","method":"Discover","params":{"change":"found"}}`))
	f.Add([]byte(`{"id":"x","kind":"response","result":{},"result":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := decodeAnswer(body)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid UTF-8 JSON: %q", body)
		}
		checkOnce(t, body, envelopeNames)
		switch env.Kind {
		case kindResponse:
			if (env.Result == nil) == (env.Error == nil) || (env.Error != nil && env.Error.Code == "") {
				t.Fatalf("response %+v", env)
			}
		case kindEvent:
			if env.Method == "" || len(env.Params) == 0 || env.Params[0] != '{' {
				t.Fatalf("event %+v", env)
			}
		default:
			t.Fatalf("kind %q", env.Kind)
		}
	})
}

// checkOnce checks, with encoding/json's tokenizer, that the object p names each of its
// top-level members once and only from names, spelled exactly.
func checkOnce(t *testing.T, p []byte, names []string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", p)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		name := tok.(string)
		if seen[name] || !slices.Contains(names, name) {
			t.Fatalf("accepted member %q (seen before: %v) in %q", name, seen[name], p)
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
}
