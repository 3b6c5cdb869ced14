package main

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/adapterkit/adapterkit/internal/proto"
)

const asAdapter = "THERMOMETER_TEST_AS_ADAPTER"

func TestMain(m *testing.M) {
	if os.Getenv(asAdapter) != "" {
		main() // the test binary re-run as the adapter process
	}
	goleak.VerifyTestMain(m)
}

// The specification's example exchange, byte for byte, against the real adapter
// process over real pipes (R1, R16, R19, R37, R38), then a clean exit on EOF (R49).
func TestSpecExampleExchange(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), asAdapter+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait closes the stdout pipe, so it is called only after stdout reached EOF.
	waited := false
	defer func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	r := proto.NewReader(stdout, 0)
	steps := []struct{ send, want string }{
		{`{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}`,
			`{"type":"result","v":1,"id":1,"value":{"protocol":1,"services":[{"id":"example.device","version":1,"methods":["example.device.read"]}]}}`},
		{`{"type":"request","v":1,"id":2,"method":"example.device.read","params":{"probe":"inlet"}}`,
			`{"type":"result","v":1,"id":2,"value":{"celsius":21.5}}`},
		{`{"type":"request","v":1,"id":3,"method":"example.device.read","params":{"probe":"slow"}}`, ``},
		{`{"type":"cancel","v":1,"id":3}`,
			`{"type":"error","v":1,"id":3,"code":"aborted","message":"Read canceled"}`},
		{`{"type":"request","v":1,"id":4,"method":"example.device.read","params":{"probe":"outlet"}}`,
			`{"type":"error","v":1,"id":4,"code":"invalid","message":"unknown probe"}`},
	}
	for _, s := range steps {
		frame, err := proto.AppendFrame(nil, []byte(s.send), 0, false)
		if err == nil {
			_, err = stdin.Write(frame)
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.want == "" {
			continue
		}
		p, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("after %s: %v", s.send, err)
		}
		if string(p) != s.want {
			t.Fatalf("after %s\n got %s\nwant %s", s.send, p, s.want)
		}
	}
	stdin.Close()
	type rest struct {
		b   []byte
		err error
	}
	eof := make(chan rest, 1)
	go func() { b, err := io.ReadAll(stdout); eof <- rest{b, err} }()
	select {
	case r := <-eof:
		if r.err != nil || len(r.b) != 0 {
			t.Fatalf("stdout after the exchange: %q %v", r.b, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("adapter did not end its output after stdin EOF")
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("adapter exit: %v", err)
	}
}
