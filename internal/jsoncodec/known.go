package jsoncodec

import (
	"github.com/adapterkit/adapterkit/internal/framewriter"
	"github.com/adapterkit/adapterkit/internal/proto"
)

// Known is what the envelope decoder learnt of a validated text's long strings, for
// [DecodeOwned], and what DecodeOwned learnt of the strings it made, for [AppendSpliced].
type Known struct {
	// Long are the text's long strings (proto.Message.Strings).
	Long []proto.LongString
	// Verbatim are the contents of strings of the text, shared by values decoded from
	// it, that the codec would write exactly as they are (proto.Verbatim): an
	// encoder splices a string that lies within one, on rune boundaries, without
	// checking it again.
	Verbatim [][]byte
}

// Splice is a run of bytes that belongs at offset At of an encoded text but was not
// copied into it: the text is written up to At, then Data, then on from At. Data is the
// memory of an immutable Go string ([AppendSpliced] writes long strings so); it must
// never be written to. It is the frame writer's type, so a result's splices are queued
// as they are.
type Splice = framewriter.Splice
