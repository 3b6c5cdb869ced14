package controlplane

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"

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
			again, err := appendFrame(nil, body)
			if err != nil || !bytes.Equal(again, stream[total-headerSize-len(body):total]) {
				t.Fatalf("re-framing differs: %v", err)
			}
		}
	})
}

// FuzzDecodeRequest: a body is either a valid request (UUID v4 id, kind request, a
// method, params an object or absent) or an invalid_params error — never a panic.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","method":"Ping"}`))
	f.Add([]byte(`{"id":"6f1c1f3e-8b1a-4c6e-9d2a-3b4c5d6e7f80","kind":"request","method":"Send","params":{"adapter":"echo","method":"example.echo.echo"}}`))
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
		if !ValidID(env.ID) || env.Kind != KindRequest || env.Method == "" {
			t.Fatalf("accepted %+v", env)
		}
		var sp SendParams
		if perr := decodeParams(env.Params, &sp); perr != nil && perr.Code != CodeInvalidParams {
			t.Fatalf("params code %q", perr.Code)
		}
		if _, err := json.Marshal(env); err != nil {
			t.Fatalf("accepted envelope does not re-encode: %v", err)
		}
	})
}
