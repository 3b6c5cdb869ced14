package jsoncodec

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
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

// A struct of self-encoding fields (time.Time, netip.Addr, a TextMarshaler enum) and a
// duration: the cost of asking the types themselves.
var (
	stampedValue = Stamped{At: time.Date(2026, 12, 3, 8, 7, 15, 123456789, time.UTC),
		Addr: netip.MustParseAddr("2001:db8::1"), Level: 2, Wait: 90 * time.Second}
	stampedText, _ = Append(nil, stampedValue)
)

func BenchmarkDecodeStamped(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var s Stamped
		if err := DecodeValue(stampedText, &s, RefuseUnknown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendStamped(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], stampedValue); err != nil {
			b.Fatal(err)
		}
	}
}

// The same with encoding/json alone, for comparison (what Append did for such a struct
// before it called Marshal methods itself).
func BenchmarkAppendStampedStd(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendStd(buf[:0], stampedValue); err != nil {
			b.Fatal(err)
		}
	}
}

// A 1 MiB and a 3.9 MiB string (a frame's largest: larger than the caches, where a
// second pass over it reads memory again) decoded from a text the caller hands over
// (decodeAliasing: the string shares the text), checking the string, and from a text
// already validated whole (what the module's own callers decode: a frame's params or
// result), not checking it again.
func BenchmarkDecodeBigString(b *testing.B) {
	decoders := []struct {
		name   string
		decode func(data []byte, r *reading) error
	}{
		{"checked", func(data []byte, r *reading) error { return decodeAliasing(data, r, RefuseUnknown) }},
		{"validated", func(data []byte, r *reading) error { return DecodeOwned(data, nil, r, false) }},
	}
	for _, text := range []struct {
		name string
		data []byte
	}{{"1MiB", bigReading}, {"3.9MiB", hugeReading}} {
		for _, d := range decoders {
			b.Run(text.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(text.data)))
				b.ReportAllocs()
				for b.Loop() {
					var r reading
					if err := d.decode(text.data, &r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A 3.9 MiB reading, a frame's largest.
var hugeReading = []byte(`{"seq":42,"name":"inlet","data":"` + strings.Repeat("x", 39<<20/10) + `"}`)

func BenchmarkAppendHuge(b *testing.B) {
	r := reading{Seq: 42, Name: "inlet", Data: strings.Repeat("x", 39<<20/10)}
	buf := make([]byte, 0, 4<<20)
	b.SetBytes(int64(len(r.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}
