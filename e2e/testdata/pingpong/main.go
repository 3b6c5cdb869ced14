// Command pingpong is BenchmarkSDKEcho's floor for Go: it reads whatever has arrived on
// stdin (64-byte messages) and writes it back to stdout in one write, again and again,
// with no framing and no JSON, until stdin ends: one message per read and write with one
// caller, as many as arrived together with many. sdk/python/tools/pingpong.py,
// sdk/typescript/tools/pingpong.mjs and sdk/rust/tools/pingpong.rs are the same program
// in the other SDKs' languages.
package main

import (
	"fmt"
	"io"
	"os"
)

// size is the length of one message: stdin must end on a message boundary.
const size = 64

func main() {
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			total += n
			if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, "pingpong:", werr)
				os.Exit(1)
			}
		}
		if err == io.EOF {
			if total%size != 0 {
				fmt.Fprintln(os.Stderr, "pingpong: stdin ended inside a message")
				os.Exit(1)
			}
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pingpong:", err)
			os.Exit(1)
		}
	}
}
