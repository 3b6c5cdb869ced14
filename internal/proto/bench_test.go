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

// Finding the end of a 3.9 MiB string in a validated text: plain, and made of escapes
// only (each escape must not make the search for the closing quote start over).
func BenchmarkSkipString(b *testing.B) {
	benchSkip(b, []byte(`"`+strings.Repeat("x", 39<<20/10)+`"`))
}

func BenchmarkSkipStringEscapes(b *testing.B) {
	benchSkip(b, []byte(`"`+strings.Repeat(`\n`, 39<<20/20)+`"`))
}

func benchSkip(b *testing.B, p []byte) {
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if end, _, ok := proto.SkipString(p, 0); !ok || end != len(p) {
			b.Fatal(end, ok)
		}
	}
}

// ScanString on the same strings, for comparison: what the decoders checked with.
func BenchmarkScanStringEscapes(b *testing.B) {
	p := []byte(`"` + strings.Repeat(`\n`, 39<<20/20) + `"`)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if end, _, err := proto.ScanString(p, 0); err != nil || end != len(p) {
			b.Fatal(end, err)
		}
	}
}
