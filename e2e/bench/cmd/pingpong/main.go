// Command pingpong is the benchmark's physical limit: it reads exactly Size bytes from
// stdin and writes them back to stdout, again and again, with no framing, no JSON and
// no goroutine but main's. A round trip through it is what two Go processes pay for
// bouncing a small message over a child's stdin and stdout pipes, and nothing more.
// It exits when stdin ends on a message boundary; a partial message is an error.
package main

import (
	"fmt"
	"io"
	"os"
)

// Size is the length of every message, the length of the bench's small params.
const Size = 64

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

// serve echoes every Size-byte message of r to w, one Write per message, until r ends.
func serve(r io.Reader, w io.Writer) error {
	var buf [Size]byte
	for {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading a message: %w", err)
		}
		if _, err := w.Write(buf[:]); err != nil {
			return fmt.Errorf("writing a message: %w", err)
		}
	}
}
