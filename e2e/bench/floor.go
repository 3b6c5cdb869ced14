package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// floor is the host side of the plainest length-prefixed JSON echo over a child's
// stdin and stdout: encoding/json, one reader goroutine, a map of pending ids, writes
// under a mutex.
type floor struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	wmu sync.Mutex // one frame per Write

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan floorReply
	err     error // set when the reader stopped

	readDone chan struct{}
}

type floorRequest struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type floorReply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	err    error
}

// errFloorClosed fails the calls pending when the floor's output ends.
var errFloorClosed = errors.New("floor: connection closed")

const floorMaxFrame = 4 << 20

func openFloor(_ context.Context, path string) (*floor, error) {
	cmd := exec.Command(path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &floor{cmd: cmd, stdin: stdin, pending: make(map[uint64]chan floorReply), readDone: make(chan struct{})}
	go f.read(stdout)
	return f, nil
}

func (f *floor) read(r io.Reader) {
	defer close(f.readDone)
	br := bufio.NewReader(r)
	var hdr [4]byte
	err := func() error {
		for {
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				return err
			}
			n := binary.BigEndian.Uint32(hdr[:])
			if n == 0 || n > floorMaxFrame {
				return fmt.Errorf("floor: bad frame length %d", n)
			}
			p := make([]byte, n)
			if _, err := io.ReadFull(br, p); err != nil {
				return err
			}
			var rep floorReply
			if err := json.Unmarshal(p, &rep); err != nil {
				return err
			}
			f.mu.Lock()
			ch, ok := f.pending[rep.ID]
			delete(f.pending, rep.ID)
			f.mu.Unlock()
			if ok {
				ch <- rep
			}
		}
	}()
	if err == io.EOF {
		err = errFloorClosed
	}
	f.mu.Lock()
	f.err = err
	for id, ch := range f.pending {
		delete(f.pending, id)
		ch <- floorReply{err: err}
	}
	f.mu.Unlock()
}

func (f *floor) Call(ctx context.Context, params []byte) ([]byte, error) {
	ch := make(chan floorReply, 1)
	f.mu.Lock()
	if f.err != nil {
		f.mu.Unlock()
		return nil, f.err
	}
	f.nextID++
	id := f.nextID
	f.pending[id] = ch
	f.mu.Unlock()
	body, err := json.Marshal(floorRequest{ID: id, Method: "echo", Params: params})
	if err != nil {
		f.forget(id)
		return nil, err
	}
	frame := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[4:], body)
	f.wmu.Lock()
	_, err = f.stdin.Write(frame)
	f.wmu.Unlock()
	if err != nil {
		f.forget(id)
		return nil, err
	}
	select {
	case rep := <-ch:
		switch {
		case rep.err != nil:
			return nil, rep.err
		case rep.Error != "":
			return nil, errors.New("floor: " + rep.Error)
		}
		return rep.Result, nil
	case <-ctx.Done():
		f.forget(id)
		return nil, ctx.Err()
	}
}

func (f *floor) forget(id uint64) {
	f.mu.Lock()
	delete(f.pending, id)
	f.mu.Unlock()
}

func (f *floor) Pid() int { return f.cmd.Process.Pid }

// Close closes the child's stdin and waits for it to exit; nothing it may have started
// is verified.
func (f *floor) Close() (bool, error) {
	_ = f.stdin.Close()
	err := f.cmd.Wait()
	<-f.readDone
	return false, err
}
