package registry_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/examples/blobs/blobsapi"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/internal/testkit"
	"github.com/adapterkit/adapterkit/registry"
)

// benchStreamBytes is the length of one benchmarked stream.
const benchStreamBytes = 64 << 20

// Streams through the blobs adapter: MB/s of 64 MiB uploads (the adapter computes a
// CRC-32C) and downloads (the adapter generates ChaCha8 bytes), beside the typed echo
// of a 1 MiB string on the echo adapter, counted one way, as the streams are.
func BenchmarkStream(b *testing.B) {
	ctx := context.Background()
	reg := registry.New(nil)
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, filepath.Join(adapterDir, testkit.Blobs.Name), nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := registry.NewClient(h, blobsapi.Service)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, benchStreamBytes)
	_, _ = io.ReadFull(blobsapi.Source(1), data)
	b.Run("upload", func(b *testing.B) {
		b.SetBytes(benchStreamBytes)
		for b.Loop() {
			if d, err := registry.Upload(ctx, c, blobsapi.Put, blobsapi.PutParams{}, strings.NewReader(string(data))); err != nil || d.Bytes != benchStreamBytes {
				b.Fatal(d, err)
			}
		}
	})
	b.Run("download", func(b *testing.B) {
		b.SetBytes(benchStreamBytes)
		for b.Loop() {
			st := registry.Download(ctx, c, blobsapi.Get, blobsapi.GetParams{Bytes: benchStreamBytes})
			if n, err := io.Copy(io.Discard, st); err != nil || n != benchStreamBytes {
				b.Fatal(n, err)
			}
			st.Close()
		}
	})
	b.Run("echo1MiB", func(b *testing.B) {
		eh, err := reg.Open(ctx, filepath.Join(adapterDir, testkit.Echo.Name), nil)
		if err != nil {
			b.Fatal(err)
		}
		ec, err := registry.NewClient(eh, echoapi.Service)
		if err != nil {
			b.Fatal(err)
		}
		blob := echoapi.Blob{S: strings.Repeat("x", 1<<20)}
		b.SetBytes(1 << 20)
		for b.Loop() {
			if r, err := registry.Call(ctx, ec, echoapi.EchoBlob, blob); err != nil || len(r.S) != 1<<20 {
				b.Fatal(err)
			}
		}
	})
}
