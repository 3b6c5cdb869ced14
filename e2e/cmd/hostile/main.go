// Command hostile is a test adapter that tries what a sandboxed adapter must not do.
// Service test.hostile version 1 has one method, test.hostile.try: params
// {"attempts":[{"op":OP,"arg":ARG},...]}; the result lists, for each attempt in order,
// {"op","arg","ok","error"}, where error is the system's message when the kernel
// refused. The ops:
//
//   - read FILE: read a file;
//   - write DIR: create DIR/hostile-probe and write to it;
//   - connect HOST:PORT: open a TCP connection;
//   - bind HOST:PORT: listen on a TCP port;
//   - unix PATH: connect to a pathname Unix socket;
//   - exec PROGRAM: run PROGRAM with no arguments (it must exit 0);
//   - signal PID: send signal 0 to a process (existence and permission check);
//   - ptrace PID: attach to a process with ptrace, then detach.
//
// The e2e sandbox tests call it with and without a sandbox.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/plugin"
)

// Attempt is one thing to try.
type Attempt struct {
	Op  string `json:"op"`
	Arg string `json:"arg"`
}

// Outcome is what happened to one attempt.
type Outcome struct {
	Op    string `json:"op"`
	Arg   string `json:"arg"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Params and Result of test.hostile.try.
type (
	Params struct {
		Attempts []Attempt `json:"attempts"`
	}
	Result struct {
		Outcomes []Outcome `json:"outcomes"`
	}
)

var (
	service = contract.NewService("test.hostile", 1)
	try     = contract.NewMethod[Params, Result](service, "try")
)

func attempt(a Attempt) error {
	switch a.Op {
	case "read":
		_, err := os.ReadFile(a.Arg)
		return err
	case "write":
		return os.WriteFile(filepath.Join(a.Arg, "hostile-probe"), []byte("written by the hostile adapter"), 0o600)
	case "connect":
		c, err := net.DialTimeout("tcp", a.Arg, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "bind":
		l, err := net.Listen("tcp", a.Arg)
		if err == nil {
			l.Close()
		}
		return err
	case "unix":
		c, err := net.DialTimeout("unix", a.Arg, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	case "exec":
		return exec.Command(a.Arg).Run()
	case "signal", "ptrace":
		pid, err := strconv.Atoi(a.Arg)
		if err != nil {
			return err
		}
		if a.Op == "signal" {
			return signal0(pid)
		}
		return ptraceAttach(pid)
	}
	return fmt.Errorf("unknown op %q", a.Op)
}

func run(_ context.Context, p Params) (Result, error) {
	var r Result
	for _, a := range p.Attempts {
		o := Outcome{Op: a.Op, Arg: a.Arg, OK: true}
		if err := attempt(a); err != nil {
			o.OK, o.Error = false, err.Error()
		}
		r.Outcomes = append(r.Outcomes, o)
	}
	return r, nil
}

func main() {
	svc := plugin.ServiceOf(service)
	plugin.Implement(svc, try, run)
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}
