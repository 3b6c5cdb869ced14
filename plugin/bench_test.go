package plugin_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
)

// benchHost is a minimal host for benchmarks: it reuses one request buffer.
type benchHost struct {
	in     *io.PipeWriter
	r      *proto.Reader
	buf    []byte
	id     uint64
	served chan error
	outR   *io.PipeReader
}

func startBench(b *testing.B, a *plugin.Adapter) *benchHost {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &benchHost{in: inW, r: proto.NewReader(outR, 0), served: make(chan error, 1), outR: outR}
	go func() { h.served <- a.Serve(context.Background(), inR, outW) }()
	h.send(proto.MethodInitialize, []byte(`{"protocol":1,"configuration":{}}`))
	h.recv(b)
	b.Cleanup(func() {
		inW.Close()
		<-h.served
		outR.Close()
	})
	return h
}

func (h *benchHost) send(method string, params []byte) {
	h.id++
	h.buf = proto.BeginFrame(h.buf[:0])
	h.buf = proto.AppendRequest(h.buf, h.id, method, params)
	h.buf, _ = proto.FinishFrame(h.buf, 0)
	h.in.Write(h.buf)
}

func (h *benchHost) recv(b *testing.B) []byte {
	p, err := h.r.ReadFrame()
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchRoundTrip(b *testing.B, method string, params []byte) {
	f := newFixture()
	h := startBench(b, f.adapter())
	b.SetBytes(int64(len(params)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.send(method, params)
		h.recv(b)
	}
}

// One request round trip through Serve over io.Pipe, raw params and result.
func BenchmarkRoundTripRaw(b *testing.B) {
	benchRoundTrip(b, "test.svc.echo", []byte(`{"hello":"world"}`))
}

// One request round trip with typed params (mapstructure) and a typed result.
func BenchmarkRoundTripTyped(b *testing.B) {
	benchRoundTrip(b, "example.device.read", []byte(`{"probe":"inlet"}`))
}

// A 3-field struct decoded from the params and encoded back (the typed path a contract
// handler takes, whose allocations per call this measures).
func BenchmarkRoundTripStruct(b *testing.B) {
	benchRoundTrip(b, "test.svc.triple", []byte(`{"seq":42,"name":"inlet","data":"0123456789abcdef"}`))
}

// A struct with one 1 MiB string field decoded and encoded back.
func BenchmarkRoundTripStruct1MiB(b *testing.B) {
	benchRoundTrip(b, "test.svc.triple", []byte(`{"seq":42,"name":"inlet","data":"`+strings.Repeat("x", 1<<20)+`"}`))
}

// A 1 MiB payload echoed back.
func BenchmarkRoundTrip1MiB(b *testing.B) {
	benchRoundTrip(b, "test.svc.echo", []byte(`{"data":"`+strings.Repeat("x", 1<<20)+`"}`))
}

// Requests pipelined with up to 32 in flight: replies are batched by the writer.
func BenchmarkPipelined(b *testing.B) {
	f := newFixture()
	h := startBench(b, f.adapter())
	params := []byte(`{"hello":"world"}`)
	slots := make(chan struct{}, limits.MaxInFlight)
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		defer close(done)
		for range b.N {
			if _, err := h.r.ReadFrame(); err != nil {
				b.Error(err)
				return
			}
			<-slots
		}
	}()
	for range b.N {
		slots <- struct{}{}
		h.send("test.svc.echo", params)
	}
	<-done
}
