// Command floorecho is the benchmark's floor: an echo server written the plainest way
// over stdin and stdout, with the same framing as the Adapter process protocol (4-byte
// big-endian length, then a JSON payload) and encoding/json for everything.
//
// A request is {"id":N,"method":"echo","params":P}; the reply is {"id":N,"result":P}.
// Each request is answered from its own goroutine, replies are written under a mutex,
// one Write per frame. It exits when stdin ends, after answering what it read.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

type request struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type reply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

const maxFrame = 4 << 20

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floorecho:", err)
		os.Exit(1)
	}
}

func serve(in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 || n > maxFrame {
			return fmt.Errorf("bad frame length %d", n)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return err
		}
		var req request
		if err := json.Unmarshal(p, &req); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := reply{ID: req.ID}
			if req.Method == "echo" {
				rep.Result = req.Params
			} else {
				rep.Error = "unknown method"
			}
			body, err := json.Marshal(rep)
			if err != nil {
				body, _ = json.Marshal(reply{ID: req.ID, Error: err.Error()})
			}
			frame := make([]byte, 4+len(body))
			binary.BigEndian.PutUint32(frame, uint32(len(body)))
			copy(frame[4:], body)
			mu.Lock()
			defer mu.Unlock()
			_, _ = out.Write(frame)
		}()
	}
}
