package controlplane

import (
	"bytes"
	"testing"
)

func BenchmarkDecodeRequest(b *testing.B) {
	id := newID()
	big := `{"data":"` + string(bytes.Repeat([]byte("x"), 1<<20)) + `"}`
	for _, bc := range []struct{ name, body string }{
		{"Ping", `{"id":"` + id + `","kind":"request","method":"Ping","params":{}}`},
		{"Discover", `{"id":"` + id + `","kind":"request","method":"Discover","params":{"timeout_ms":1000}}`},
		{"Send", `{"id":"` + id + `","kind":"request","method":"Send","params":{"adapter":"echo","method":"example.echo.echo","params":{"hi":1},"timeout_ms":1000}}`},
		{"Send1MiB", `{"id":"` + id + `","kind":"request","method":"Send","params":{"adapter":"echo","method":"example.echo.echo","params":` + big + `}}`},
	} {
		body := []byte(bc.body)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				env, _, err := decodeRequest(body)
				if err != nil {
					b.Fatal(err)
				}
				switch env.Method {
				case methodSend:
					_, err = decodeSend(env.Params)
				case methodDiscover:
					var w discoverWire
					err = decodeParams(env.Params, &w)
				default:
					err = decodeParams(env.Params, &struct{}{})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
