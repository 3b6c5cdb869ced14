package main

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestServeEchoesExactly feeds messages one byte at a time (so that every read is
// short) and checks that each comes back whole, in order, and nothing else.
func TestServeEchoesExactly(t *testing.T) {
	var in bytes.Buffer
	for i := range 3 {
		in.Write(bytes.Repeat([]byte{byte('a' + i)}, Size))
	}
	want := bytes.Clone(in.Bytes())
	var out bytes.Buffer
	if err := serve(iotest.OneByteReader(&in), &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("echoed %q, want %q", out.Bytes(), want)
	}
}

func TestServeRejectsPartialMessage(t *testing.T) {
	in := bytes.NewReader(make([]byte, Size+Size/2))
	var out bytes.Buffer
	err := serve(in, &out)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("serve of 1.5 messages = %v, want io.ErrUnexpectedEOF", err)
	}
	if out.Len() != Size {
		t.Errorf("echoed %d bytes before the partial message, want %d", out.Len(), Size)
	}
}

func TestServeEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := serve(bytes.NewReader(nil), &out); err != nil || out.Len() != 0 {
		t.Errorf("serve of nothing = %v, %d bytes", err, out.Len())
	}
}
