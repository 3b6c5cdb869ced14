package codec

import (
	"reflect"
	"strings"
	"testing"
)

// reading is the 3-field struct of the allocation report.
type reading struct {
	Seq  int64  `json:"seq"`
	Name string `json:"name"`
	Data string `json:"data"`
}

var (
	smallReading = []byte(`{"seq":42,"name":"inlet","data":"0123456789abcdef"}`)
	bigReading   = []byte(`{"seq":42,"name":"inlet","data":"` + strings.Repeat("x", 1<<20) + `"}`)
)

func benchDecode(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var r reading
		if err := DecodeValue(data, &r, RefuseUnknown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSmall(b *testing.B) { benchDecode(b, smallReading) }
func BenchmarkDecodeBig(b *testing.B)   { benchDecode(b, bigReading) }

// The mapstructure path on the same input, for comparison.
func BenchmarkDecodeSmallMapstructure(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var r reading
		if err := decodeRef(smallReading, reflect.ValueOf(&r).Elem(), RefuseUnknown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSmall(b *testing.B) {
	r := reading{Seq: 42, Name: "inlet", Data: "0123456789abcdef"}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBig(b *testing.B) {
	r := reading{Seq: 42, Name: "inlet", Data: strings.Repeat("x", 1<<20)}
	buf := make([]byte, 0, 2<<20)
	b.SetBytes(int64(len(r.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBigStd(b *testing.B) {
	r := reading{Seq: 42, Name: "inlet", Data: strings.Repeat("x", 1<<20)}
	buf := make([]byte, 0, 2<<20)
	b.SetBytes(int64(len(r.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendStd(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}
