// Command pingpong is BenchmarkSDKEcho's floor for Go: it reads exactly 64 bytes from
// stdin and writes them back to stdout, again and again, with no framing and no JSON,
// until stdin ends. sdk/python/tools/pingpong.py and sdk/typescript/tools/pingpong.mjs
// are the same program in the other SDKs' languages.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	var buf [64]byte
	for {
		if _, err := io.ReadFull(os.Stdin, buf[:]); err != nil {
			if err == io.EOF {
				return
			}
			fmt.Fprintln(os.Stderr, "pingpong:", err)
			os.Exit(1)
		}
		if _, err := os.Stdout.Write(buf[:]); err != nil {
			fmt.Fprintln(os.Stderr, "pingpong:", err)
			os.Exit(1)
		}
	}
}
