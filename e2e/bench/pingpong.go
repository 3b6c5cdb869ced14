package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// pingpongSize is the length of cmd/pingpong's messages: the small params, sent raw.
const pingpongSize = 64

// pingpong is the host side of the physical limit: it writes the params' 64 bytes to
// the child's stdin and reads 64 bytes back from its stdout, one caller at a time, with
// no framing, no ids and no goroutine of its own.
type pingpong struct {
	cmd *exec.Cmd
	in  *os.File // the child's stdin
	out *os.File // the child's stdout

	mu sync.Mutex // one round trip at a time: replies carry no id
}

func openPingpong(_ context.Context, path string) (*pingpong, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(path)
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &pingpong{cmd: cmd, in: inW, out: outR}, nil
}

// Call bounces p, which must be pingpongSize bytes, off the child. The context's
// deadline bounds the read of the reply (os.Pipe's ends are pollable).
func (p *pingpong) Call(ctx context.Context, params []byte) ([]byte, error) {
	if len(params) != pingpongSize {
		return nil, fmt.Errorf("pingpong: params of %d bytes, it bounces only %d", len(params), pingpongSize)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d, _ := ctx.Deadline() // zero (none) clears the last call's
	if err := p.out.SetReadDeadline(d); err != nil {
		return nil, err
	}
	if _, err := p.in.Write(params); err != nil {
		return nil, err
	}
	reply := make([]byte, pingpongSize)
	if _, err := io.ReadFull(p.out, reply); err != nil {
		return nil, err
	}
	return reply, nil
}

func (p *pingpong) Pid() int { return p.cmd.Process.Pid }

// Close closes the child's stdin and waits for it to exit; nothing is verified.
func (p *pingpong) Close() (bool, error) {
	p.in.Close()
	err := p.cmd.Wait()
	p.out.Close()
	return false, err
}
