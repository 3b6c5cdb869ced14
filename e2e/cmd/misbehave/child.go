package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childArg is the hidden first argument that makes the executable run as a child.
const childArg = "__child"

// Kinds of child process.
const (
	kindSleep = "sleep" // record, then sleep until killed
	kindFork  = "fork"  // record, start a setsid sleeper ("daemon"), exit
	kindChain = "chain" // record, start the next link (depth-1) and exit; the last sleeps
)

// readyFD is the descriptor on which each child writes one byte once it has recorded
// itself. Every process of a spawned subtree shares the pipe's write end, so its reader
// sees EOF only when all of them have recorded themselves and closed it (or died).
const readyFD = 3

// childSpec is one child for the adapter to start.
type childSpec struct {
	kind      string
	role      string
	depth     int  // chain only
	holdPipes bool // the child inherits the adapter's stdin and stdout
}

// processes is how many processes the subtree of c records.
func (c childSpec) processes() int {
	switch c.kind {
	case kindFork:
		return 2
	case kindChain:
		return c.depth
	}
	return 1
}

// startChild starts c and waits, within ctx, until every process of its subtree has
// recorded itself.
func startChild(ctx context.Context, pidfile string, c childSpec) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd, err := childCommand(c.kind, pidfile, c.role, c.depth, w)
	if err != nil {
		w.Close()
		return err
	}
	if c.holdPipes {
		cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	// Reap it: the links of a chain and the middle of a double fork exit at once.
	go func() { _ = cmd.Wait() }()
	got := make(chan int, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- len(b)
	}()
	select {
	case n := <-got:
		if want := c.processes(); n != want {
			return fmt.Errorf("%d of %d processes recorded themselves", n, want)
		}
		return nil
	case <-ctx.Done():
		r.Close() // ends the reading goroutine
		return context.Cause(ctx)
	}
}

// childCommand returns the command running this executable as a child of kind, with
// ready as its descriptor readyFD.
func childCommand(kind, pidfile, role string, depth int, ready *os.File) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, childArg, kind, pidfile, role, strconv.Itoa(depth))
	cmd.ExtraFiles = []*os.File{ready}
	cmd.Stderr = os.Stderr
	return cmd, nil
}

// runChild is the whole life of a child process: args are kind, pidfile, role, depth.
func runChild(args []string) {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	if err := child(args); err != nil {
		fmt.Fprintln(os.Stderr, "misbehave child:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func child(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("want kind, pidfile, role and depth, got %q", args)
	}
	kind, pidfile, role := args[0], args[1], args[2]
	depth, err := strconv.Atoi(args[3])
	if err != nil {
		return err
	}
	ready := os.NewFile(readyFD, "ready")
	if kind == kindChain {
		role = kindChain + strconv.Itoa(depth)
	}
	if err := record(pidfile, "proc", role); err != nil {
		return err
	}
	if _, err := ready.Write([]byte{1}); err != nil {
		return err
	}
	var next *exec.Cmd
	switch {
	case kind == kindSleep:
	case kind == kindFork:
		if next, err = childCommand(kindSleep, pidfile, "daemon", 0, ready); err != nil {
			return err
		}
		next.SysProcAttr = newSessionAttr()
	case kind == kindChain && depth > 1:
		if next, err = childCommand(kindChain, pidfile, "", depth-1, ready); err != nil {
			return err
		}
	case kind == kindChain:
	default:
		return fmt.Errorf("unknown child kind %q", kind)
	}
	if next != nil {
		// Start the next process and exit without waiting: it is re-parented.
		err := next.Start()
		ready.Close()
		return err
	}
	ready.Close()
	for {
		time.Sleep(time.Hour)
	}
}

// procRecord is one process of the record.
type procRecord struct {
	Role  string `json:"role"`
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// record appends "<kind> <role> <pid> <start>" for this process to pidfile, in one write.
func record(pidfile, kind, role string) error {
	pid := hostPid()
	line := fmt.Sprintf("%s %s %d %d\n", kind, role, pid, startTime(pid))
	f, err := os.OpenFile(pidfile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(line))
	return errors.Join(err, f.Close())
}

// readRecords returns the "proc" lines of pidfile.
func readRecords(pidfile string) ([]procRecord, error) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return nil, err
	}
	var out []procRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "proc" {
			continue
		}
		pid, err1 := strconv.Atoi(f[2])
		start, err2 := strconv.ParseUint(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("malformed record %q", line)
		}
		out = append(out, procRecord{Role: f[1], Pid: pid, Start: start})
	}
	return out, nil
}

// hostPid is this process's pid as the host sees it. /proc is the host's, so /proc/self
// names the host's pid even in a PID namespace where getpid returns 1. Without /proc
// (not Linux) it is getpid.
func hostPid() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if pid, err := strconv.Atoi(s); err == nil {
			return pid
		}
	}
	return os.Getpid()
}

// startTime is field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or
// 0 where /proc is missing.
func startTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}
