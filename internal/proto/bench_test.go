package proto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
)

func BenchmarkDecodeResult(b *testing.B) {
	p := []byte(`{"type":"result","v":1,"id":12345,"value":{"celsius":21.5,"probe":"inlet","ok":true}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := proto.DecodeAdapterMessage(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResult1MiB(b *testing.B) {
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	p := proto.AppendResult(nil, 7, big)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := proto.DecodeAdapterMessage(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRequest(b *testing.B) {
	p := []byte(`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := proto.DecodeHostMessage(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	params := []byte(`{"probe":"inlet","pad":"0123456789012345678901234567890123456789"}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = proto.AppendRequest(buf[:0], 123456, "example.device.read", params)
	}
}
