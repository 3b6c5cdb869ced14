// Package wire is the vocabulary of the Adapter process protocol v1 that both ends
// share: the error [Code] of an error reply, the [Catalog] an adapter returns from the
// initialize handshake, and the kinds of protocol [Violation] that end a connection.
//
// In the module's layers it sits just above limits and below everything else,
// internal/proto included, so that the framing code, the host side and the SDK name the
// same types.
//
// The framing, the envelopes and their strict decoding are internal to the module:
// package runtime (the host side) and package plugin (the adapter SDK) are the ways to
// speak the protocol. docs/protocol.md describes it.
package wire
