package registry_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adapterkit/adapterkit/examples/blobs/blobsapi"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
	"github.com/adapterkit/adapterkit/wire"
)

// openBlobs opens the blobs adapter and binds its typed client.
func openBlobs(t *testing.T) *registry.Client {
	t.Helper()
	r := newRegistry(t, nil)
	h, err := r.Open(ctxT(t), "blobs", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	c, err := registry.NewClient(h, blobsapi.Service)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func crc32c(b []byte) string {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Streams of every length around the chunk boundaries arrive whole and in order, both
// ways, through a real adapter process.
func TestUploadDownloadLengths(t *testing.T) {
	c := openBlobs(t)
	chunk := proto.ChunkBytes(blobsapi.Put.Name())
	for _, n := range []int{0, 1, chunk - 64, chunk, chunk + 1, 3*chunk + 7} {
		data := make([]byte, n)
		_, _ = io.ReadFull(blobsapi.Source(uint64(n)), data)
		got, err := registry.Upload(ctxT(t), c, blobsapi.Put, blobsapi.PutParams{}, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Upload of %d bytes: %v", n, err)
		}
		if want := (blobsapi.Digest{Bytes: int64(n), CRC32C: crc32c(data)}); got != want {
			t.Fatalf("Upload of %d bytes: adapter saw %+v, want %+v", n, got, want)
		}
		st := registry.Download(ctxT(t), c, blobsapi.Get, blobsapi.GetParams{Bytes: int64(n), Seed: uint64(n)})
		back, err := io.ReadAll(st)
		st.Close()
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("Download of %d bytes: %d bytes, equal %v, err %v", n, len(back), bytes.Equal(back, data), err)
		}
	}
}

// A chunk that fails ends the stream with a *registry.ChunkError naming it and
// wrapping the call's error: the adapter's handler failing (upload and download) and
// the host's source failing.
func TestStreamChunkError(t *testing.T) {
	c := openBlobs(t)
	chunk := int64(proto.ChunkBytes(blobsapi.Put.Name()))
	first := chunk - int64(len(`{"fail_after":5242880}`)+3)/4*3
	const failAt = 5 << 20

	t.Run("upload handler fails", func(t *testing.T) {
		_, err := registry.Upload(ctxT(t), c, blobsapi.Put, blobsapi.PutParams{FailAfter: failAt}, blobsapi.Source(1))
		var ce *registry.ChunkError
		// The handler fails reading chunk 1, whose call was answered when the handler
		// took its bytes: the error is chunk 2's, the first it did not take.
		if !errors.As(err, &ce) || ce.Index != 2 || ce.Offset != first+chunk || ce.Method != blobsapi.Put.Name() {
			t.Fatalf("Upload = %v, want a ChunkError of chunk 2 at offset %d", err, first+chunk)
		}
		if runtime.CodeOf(err) != wire.CodeFailed || !strings.Contains(err.Error(), "failing after") {
			t.Fatalf("Upload = %v, want the handler's error (failed)", err)
		}
	})
	t.Run("source fails", func(t *testing.T) {
		broken := errors.New("disk gone")
		src := io.MultiReader(io.LimitReader(blobsapi.Source(2), failAt), &failingReader{broken})
		_, err := registry.Upload(ctxT(t), c, blobsapi.Put, blobsapi.PutParams{}, src)
		var ce *registry.ChunkError
		if !errors.As(err, &ce) || !errors.Is(err, broken) || ce.Index != 1 {
			t.Fatalf("Upload = %v, want a ChunkError of chunk 1 wrapping the source's error", err)
		}
	})
	t.Run("download handler fails", func(t *testing.T) {
		st := registry.Download(ctxT(t), c, blobsapi.Get, blobsapi.GetParams{Bytes: -1, Seed: 3, FailAfter: failAt})
		defer st.Close()
		got, err := io.ReadAll(st)
		var ce *registry.ChunkError
		if !errors.As(err, &ce) || ce.Offset != failAt || int64(len(got)) != failAt || runtime.CodeOf(err) != wire.CodeFailed {
			t.Fatalf("Download: %d bytes then %v, want %d bytes then a ChunkError at that offset (failed)", len(got), err, failAt)
		}
	})
}

type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// settled polls f until it returns the same value for 300 ms and returns it.
func settled(t *testing.T, f func() int64) int64 {
	t.Helper()
	last, since := f(), time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if v := f(); v != last {
			last, since = v, time.Now()
		} else if time.Since(since) > 300*time.Millisecond {
			return v
		}
	}
	t.Fatalf("still changing: %d", last)
	return 0
}

func stats(t *testing.T, c *registry.Client) blobsapi.Counters {
	t.Helper()
	s, err := registry.Call(ctxT(t), c, blobsapi.Stats, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A handler slower than the host holds the stream back: an endless upload to a
// handler that stopped reading pulls a few chunks from its source, no more; a download
// that the host stopped reading has its handler write a few chunks ahead, no more.
// Cancelling the upload's context, and closing the download, ends the adapter's
// handlers (and, TestMain checks, leaves no goroutine behind in the host).
func TestStreamBackpressureAndCancel(t *testing.T) {
	c := openBlobs(t)
	chunk := int64(proto.ChunkBytes(blobsapi.Put.Name()))

	t.Run("upload", func(t *testing.T) {
		src := &countingReader{r: blobsapi.Source(4)}
		ctx, cancel := context.WithCancel(ctxT(t))
		done := make(chan error, 1)
		go func() {
			_, err := registry.Upload(ctx, c, blobsapi.Put, blobsapi.PutParams{Stall: true}, src)
			done <- err
		}()
		pulled := settled(t, src.n.Load)
		t.Logf("pulled %d = %.1f chunks; adapter %+v", pulled, float64(pulled)/float64(chunk), stats(t, c))
		// One chunk taken by the handler, two in flight, one read and waiting to go.
		if pulled > 4*chunk {
			t.Fatalf("the host pulled %d bytes (%.1f chunks) for a handler that stopped reading", pulled, float64(pulled)/float64(chunk))
		}
		cancel()
		err := <-done
		var ce *registry.ChunkError
		if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Upload after cancel = %v, want a ChunkError wrapping context.Canceled", err)
		}
		if n := settled(t, func() int64 { return stats(t, c).Running }); n != 0 {
			t.Fatalf("%d handlers still run after the cancel", n)
		}
	})
	t.Run("download", func(t *testing.T) {
		st := registry.Download(ctxT(t), c, blobsapi.Get, blobsapi.GetParams{Bytes: -1, Seed: 5})
		before := stats(t, c).Written
		if _, err := st.Read(make([]byte, 1)); err != nil { // one read: at most a chunk
			t.Fatal(err)
		}
		written := settled(t, func() int64 { return stats(t, c).Written }) - before
		// The chunk read, two chunks of buffer, and the handler's own buffer (256 KiB)
		// being written.
		if written > 3*chunk+256<<10 {
			t.Fatalf("the handler wrote %d bytes (%.1f chunks) for a host that read once", written, float64(written)/float64(chunk))
		}
		st.Close()
		if n := settled(t, func() int64 { return stats(t, c).Running }); n != 0 {
			t.Fatalf("%d handlers still run after Close", n)
		}
	})
}
