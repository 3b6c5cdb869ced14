package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/adapterkit/adapterkit/examples/blobs/blobsapi"
	"github.com/adapterkit/adapterkit/registry"
)

// streamBytes is the length of the stream workload's upload and download.
const streamBytes = 256 << 20

// streamEchoCalls is how many typed 1 MiB echoes the stream workload makes beside its
// streams, on the same run, for their ratio.
const streamEchoCalls = 64

// binBlobs is the blobs adapter (examples/blobs) in the build directory.
const binBlobs = "akblobs"

// runStream (adapterkit only): a 256 MiB upload (registry.Upload to examples/blobs,
// whose handler computes a CRC-32C) and a 256 MiB download (registry.Download of the
// bytes the adapter generates), each checked against the CRC-32C of the bytes sent or
// expected; MB/s counts the stream's bytes, one way. Beside them, on the same
// machine and run, the typed echo of a 1 MiB string (MB/s counting the payload both
// ways, as big does) and each stream's ratio to it.
func runStream(ctx context.Context, s *system, env *runEnv) (metrics, error) {
	m := metrics{}
	up, down, err := streamOnce(ctx, filepath.Join(env.binDir, binBlobs), streamBytes)
	if err != nil {
		return nil, err
	}
	m["mbps_upload"] = float64(streamBytes) / up.Seconds() / 1e6
	m["mbps_download"] = float64(streamBytes) / down.Seconds() / 1e6
	in, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if err := call(ctx, in, bigSmall); err != nil { // warm
		return nil, err
	}
	start := time.Now()
	for range streamEchoCalls {
		if err := call(ctx, in, bigSmall); err != nil {
			return nil, err
		}
	}
	echo := float64(2*streamEchoCalls*len(bigSmall)) / time.Since(start).Seconds() / 1e6
	m["mbps_echo_1MiB"] = echo
	m["upload_per_echo"] = m["mbps_upload"] / echo
	m["download_per_echo"] = m["mbps_download"] / echo
	return m, nil
}

// streamOnce uploads and downloads n bytes through the blobs adapter at path, checks
// both against their CRC-32C, and returns how long each took.
func streamOnce(ctx context.Context, path string, n int64) (up, down time.Duration, err error) {
	reg := registry.New(&registry.Config{Stderr: os.Stderr})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, path, nil)
	if err != nil {
		return 0, 0, err
	}
	defer h.Close()
	c, err := registry.NewClient(h, blobsapi.Service)
	if err != nil {
		return 0, 0, err
	}
	// The expected bytes: the seed's, whose CRC-32C is taken as they are sent.
	const seed = 49
	sum := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	start := time.Now()
	d, err := registry.Upload(ctx, c, blobsapi.Put, blobsapi.PutParams{}, io.TeeReader(io.LimitReader(blobsapi.Source(seed), n), sum))
	up = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("upload: %w", err)
	}
	want := hex.EncodeToString(sum.Sum(nil))
	if d.Bytes != n || d.CRC32C != want {
		return 0, 0, fmt.Errorf("upload: the adapter read %d bytes of CRC-32C %s, want %d of %s", d.Bytes, d.CRC32C, n, want)
	}
	got := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	start = time.Now()
	st := registry.Download(ctx, c, blobsapi.Get, blobsapi.GetParams{Bytes: n, Seed: seed})
	k, err := io.Copy(got, st)
	down = time.Since(start)
	st.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("download: %w", err)
	}
	if k != n || hex.EncodeToString(got.Sum(nil)) != want {
		return 0, 0, fmt.Errorf("download: %d bytes of CRC-32C %x, want %d of %s", k, got.Sum(nil), n, want)
	}
	return up, down, nil
}
