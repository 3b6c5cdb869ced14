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
//   - ptrace PID: attach to a process with ptrace, then detach;
//
// and (Linux) the attacks on containment itself, each reporting in detail what a
// success achieved:
//
//   - chmod-suid FILE, chown FILE, utimes FILE, setxattr FILE: change a file's mode
//     (set-user-ID), owner (to the adapter's own uid), times or extended attributes;
//   - create-suid DIR, copy-suid DIR, mknod-suid DIR: make a set-user-ID file in DIR by
//     open(O_CREAT, 04755), by copying /usr/bin/id and chmod 4755, or by mknod;
//   - tgkill PID:SIG (or parent:SIG): send SIG to every thread of a process, found in
//     /proc or, where /proc is closed, by probing thread ids; "unreachable" when a PID
//     namespace hides the process;
//   - prlimit PID (or parent): rewrite that process's RLIMIT_CORE; renice, affinity,
//     ioprio PID (or parent): its priority, CPU affinity, I/O priority (each to what it is);
//   - listen: listen on a TCP socket without bind (detail: the port the kernel chose);
//   - dgram PATH: socketpair(AF_UNIX, SOCK_DGRAM), then sendto the datagram socket PATH;
//   - udp HOST:PORT: send a UDP datagram;
//   - userns: clone a child into a user namespace of its own (where it would hold
//     every capability);
//   - clone-parent: clone a child of the host (CLONE_PARENT), which leaves the adapter's
//     process group and lives two seconds;
//   - shm ID: write into the System V shared memory segment ID (of another process).
//
// With HOSTILE_ATTEMPTS set (the params' JSON) and HOSTILE_REPORT naming a file, it
// tries them as it starts, before it speaks the protocol, and writes the result there:
// that is how a host which never calls it (adapterctl check) is attacked too.
//
// The e2e sandbox and containment tests call it with and without a sandbox.
package main

import (
	"context"
	"encoding/json"
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
	Op     string `json:"op"`
	Arg    string `json:"arg"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
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

func attempt(a Attempt) (string, error) {
	if detail, ok, err := containOp(a); ok {
		return detail, err
	}
	return "", attemptBasic(a)
}

func attemptBasic(a Attempt) error {
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
		detail, err := attempt(a)
		if err != nil {
			o.OK, o.Error = false, err.Error()
		}
		o.Detail = detail
		r.Outcomes = append(r.Outcomes, o)
	}
	return r, nil
}

// atStart runs the attempts of HOSTILE_ATTEMPTS and writes the result to
// HOSTILE_REPORT, when both are set.
func atStart() {
	params, report := os.Getenv("HOSTILE_ATTEMPTS"), os.Getenv("HOSTILE_REPORT")
	if params == "" || report == "" {
		return
	}
	var p Params
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: HOSTILE_ATTEMPTS:", err)
		os.Exit(2)
	}
	r, _ := run(context.Background(), p)
	b, _ := json.Marshal(r)
	if err := os.WriteFile(report, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: HOSTILE_REPORT:", err)
	}
}

func main() {
	atStart()
	svc := plugin.ServiceOf(service)
	plugin.Implement(svc, try, run)
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}
