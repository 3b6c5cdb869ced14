// Package proto is the Adapter process protocol v1 on the wire: frames, envelopes, and
// the initialize catalog's encoding and checks, shared by the host side (package runtime)
// and the adapter SDK (package plugin). The vocabulary they share with users (codes,
// the catalog, violations) is package wire.
//
// It is in the module's shared layer (internal/) and imports only limits and wire;
// codec, contract, runtime, plugin, lifecycle, registry, controlplane and adapterctl
// build on it.
//
// A frame is a 4-byte big-endian payload length followed by exactly that many bytes of
// UTF-8 JSON (R1-R5). [Reader] checks the length against the cap before it allocates
// anything, so a peer cannot make the reader buffer more than the cap.
//
// Envelopes are decoded strictly (R9-R14, A2, A4-A6): exactly one JSON object, valid
// UTF-8, the type's fields and no others, each field present and of the right kind, v
// equal to 1, and ids that are plain integer literals from 1 to 2^53-1. Decoding is a
// single pass over the payload that validates the JSON grammar and UTF-8 together; the
// free-form params and value are returned as sub-slices of the payload, not copied.
//
// Encoding appends to a caller's buffer ([AppendRequest] and friends) so that a frame
// is built in one buffer and written with one Write ([BeginFrame], [FinishFrame]).
package proto
