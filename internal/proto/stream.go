package proto

import "github.com/adapterkit/adapterkit/limits"

// The wire types of adapterkit's byte streams (contract.NewUpload, contract.NewDownload),
// shared by the host (registry) and the Go SDK (plugin); docs/contracts.md describes
// them for the other languages' SDKs.

// UploadChunk is the params of one call of an upload method: chunk Seq (from 0) of the
// stream named Stream (chosen by the host, unique per stream), whose bytes begin at
// Offset. The first chunk carries the method's own params; the last says EOF. A chunk
// with Abort set carries no data: the host gave up the stream, for the reason given.
type UploadChunk[P any] struct {
	Stream string `json:"stream"`
	Seq    int64  `json:"seq"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
	EOF    bool   `json:"eof,omitempty"`
	Abort  string `json:"abort,omitempty"`
	Params *P     `json:"params,omitempty"`
}

// UploadReply is the result of one call of an upload method: empty for every chunk
// but the last, whose reply carries the handler's result.
type UploadReply[R any] struct {
	Result *R `json:"result,omitempty"`
}

// DownloadRead is the params of one waiting read of a download method (the waiting-read
// convention of registry.Stream): at most MaxBytes bytes of the stream named Stream
// (chosen by the host), waiting at most WaitMS milliseconds for them. The first read
// carries the method's own params and starts the stream; Close ends it early.
type DownloadRead[P any] struct {
	Stream   string `json:"stream"`
	MaxBytes int    `json:"max_bytes"`
	WaitMS   int64  `json:"wait_ms"`
	Close    bool   `json:"close,omitempty"`
	Params   *P     `json:"params,omitempty"`
}

// DownloadChunk is the result of one read of a download method: the next bytes
// (possibly none) and whether the stream ended after them.
type DownloadChunk struct {
	Data []byte `json:"data"`
	EOF  bool   `json:"eof"`
}

// streamEnvelope is room kept in a chunk's frame for everything but its data: the
// request envelope, the method name and the chunk's other members. Measured frames
// need about 160 bytes besides the method name.
const streamEnvelope = 1 << 10

// ChunkBytes is the most bytes of data one chunk of a stream carries through the method
// named method (upload call or download read) with the default frame limit: base64
// (4 bytes for every 3) fills the frame less room for the envelope and the name, a
// multiple of 3 so that no padding is sent.
func ChunkBytes(method string) int {
	return (limits.MaxFrameSize - streamEnvelope - len(method)) / 4 * 3
}
