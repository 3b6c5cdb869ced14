// Command blobs is a test adapter: service example.blobs version 1 (declared in
// examples/blobs/blobsapi), whose methods move byte streams both ways through the Go
// SDK's stream helpers. Tests and benchmarks of streams use it.
//
//   - example.blobs.put (an upload, plugin.ImplementUpload) reads the host's stream to
//     its end and returns its length and CRC-32C; it can fail or stall on request.
//   - example.blobs.get (a download, plugin.ImplementDownload) writes a stream of
//     pseudo-random bytes of the asked length and seed; it can fail on request.
//   - example.blobs.stats returns how many stream handlers run and the bytes they moved.
package main

import (
	"context"
	"encoding/hex"
	"hash/crc32"
	"io"
	"sync/atomic"

	"github.com/adapterkit/adapterkit/examples/blobs/blobsapi"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// counters are the adapter's, for example.blobs.stats.
var running, read, written atomic.Int64

func put(ctx context.Context, p blobsapi.PutParams, r io.Reader) (blobsapi.Digest, error) {
	running.Add(1)
	defer running.Add(-1)
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		read.Add(int64(k))
		if p.FailAfter > 0 && n >= p.FailAfter {
			return blobsapi.Digest{}, plugin.Errorf(wire.CodeFailed, "failing after %d bytes as asked", n)
		}
		if p.Stall {
			<-ctx.Done()
			return blobsapi.Digest{}, context.Cause(ctx)
		}
		if err == io.EOF {
			return blobsapi.Digest{Bytes: n, CRC32C: hex.EncodeToString(h.Sum(nil))}, nil
		}
		if err != nil {
			return blobsapi.Digest{}, err
		}
	}
}

func get(_ context.Context, p blobsapi.GetParams, w io.Writer) error {
	running.Add(1)
	defer running.Add(-1)
	src := blobsapi.Source(p.Seed)
	buf := make([]byte, 256<<10)
	var n int64
	for p.Bytes < 0 || n < p.Bytes {
		k := len(buf)
		if p.Bytes >= 0 {
			k = int(min(int64(k), p.Bytes-n))
		}
		if p.FailAfter > 0 {
			k = int(min(int64(k), p.FailAfter-n))
		}
		_, _ = src.Read(buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n += int64(k)
		written.Add(int64(k))
		if p.FailAfter > 0 && n >= p.FailAfter {
			return plugin.Errorf(wire.CodeFailed, "failing after %d bytes as asked", n)
		}
	}
	return nil
}

func stats(context.Context, struct{}) (blobsapi.Counters, error) {
	return blobsapi.Counters{Running: running.Load(), Read: read.Load(), Written: written.Load()}, nil
}

// newAdapter returns the blobs adapter.
func newAdapter() *plugin.Adapter {
	svc := plugin.ServiceOf(blobsapi.Service)
	plugin.ImplementUpload(svc, blobsapi.Put, put)
	plugin.ImplementDownload(svc, blobsapi.Get, get)
	plugin.Implement(svc, blobsapi.Stats, stats)
	return &plugin.Adapter{Services: []*plugin.Service{svc}}
}

func main() { plugin.Main(newAdapter()) }
