// Package blobsapi is the contract of service example.blobs version 1, the service of
// the blobs test adapter (examples/blobs): byte streams both ways, declared once with
// contract.NewUpload and contract.NewDownload, imported by the adapter and by the
// hosts that test and benchmark it.
package blobsapi

import (
	"encoding/binary"
	"io"
	"math/rand/v2"

	"github.com/adapterkit/adapterkit/contract"
)

// PutParams are the params of example.blobs.put.
type PutParams struct {
	// FailAfter, when above 0, makes the handler fail (code failed) once it has read
	// that many bytes.
	FailAfter int64 `json:"fail_after,omitempty"`
	// Stall makes the handler stop reading after its first read, until the stream is
	// given up: a handler slower than the host.
	Stall bool `json:"stall,omitempty"`
}

// Digest is the result of example.blobs.put: how many bytes the stream had and their
// CRC-32C (Castagnoli) in lower-case hex.
type Digest struct {
	Bytes  int64  `json:"bytes"`
	CRC32C string `json:"crc32c"`
}

// GetParams are the params of example.blobs.get.
type GetParams struct {
	// Bytes is the stream's length; -1 means endless.
	Bytes int64 `json:"bytes"`
	// Seed chooses the bytes: the output of math/rand/v2's ChaCha8 seeded with Seed in
	// its first 8 bytes (little-endian), the rest zero.
	Seed uint64 `json:"seed"`
	// FailAfter, when above 0, makes the handler fail (code failed) once it has written
	// that many bytes.
	FailAfter int64 `json:"fail_after,omitempty"`
}

// Counters are the result of example.blobs.stats: the adapter's streams under way
// and the bytes its handlers moved so far.
type Counters struct {
	Running int64 `json:"running"` // handlers of put and get running
	Read    int64 `json:"read"`    // bytes put's handlers read
	Written int64 `json:"written"` // bytes get's handlers wrote
}

var (
	// Service is example.blobs version 1.
	Service = contract.NewService("example.blobs", 1)
	// Put reads the uploaded stream to its end and returns its length and digest.
	Put = contract.NewUpload[PutParams, Digest](Service, "put")
	// Get writes the stream GetParams describe.
	Get = contract.NewDownload[GetParams](Service, "get")
	// Stats returns the adapter's counters.
	Stats = contract.NewMethod[struct{}, Counters](Service, "stats")
)

// Source returns the bytes example.blobs.get writes for seed (see GetParams), endless.
func Source(seed uint64) io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return rand.NewChaCha8(s)
}
