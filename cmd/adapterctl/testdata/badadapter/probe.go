package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// probeParams are the params of the prober's bad.adapter.echo.
type probeParams struct {
	Read    []string
	List    []string
	Inotify bool
	Bomb    []string // MAX, PROGRAM, ARG...
	Escape  []string // the daemon's token, the cgroup.procs file to move it to
}

// held are the processes a bomb started, killed by release.
var held []*os.Process

// probe tries what params ask for and returns the outcomes, a JSON object.
func probe(params []byte) ([]byte, error) {
	var p probeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if len(p.Bomb) == 1 || len(p.Escape) != 0 && len(p.Escape) != 2 {
		return nil, errors.New(`want "bomb": [MAX, PROGRAM, ARG...] and "escape": [T, PROCS]`)
	}
	out := map[string]string{}
	for _, path := range p.Read {
		_, err := os.ReadFile(path)
		out["read:"+path] = outcome(err)
	}
	for _, path := range p.List {
		_, err := os.ReadDir(path)
		out["list:"+path] = outcome(err)
	}
	if p.Inotify {
		out["inotify"] = outcome(inotify())
	}
	if len(p.Bomb) > 0 {
		max, err := strconv.Atoi(p.Bomb[0])
		if err != nil {
			return nil, fmt.Errorf("bomb: %q is not a number", p.Bomb[0])
		}
		out["bomb"] = bomb(max, p.Bomb[1:])
	}
	if len(p.Escape) > 0 {
		cmd := exec.Command(os.Args[0], "sleeper", p.Escape[0])
		ownSession(cmd)
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting the daemon: %w", err)
		}
		out["daemon"] = strconv.Itoa(cmd.Process.Pid)
		out["escape"] = outcome(os.WriteFile(p.Escape[1], []byte(out["daemon"]), 0))
	}
	return json.Marshal(out)
}

// outcome is "ok" for a nil error, else "err " and the error.
func outcome(err error) string {
	if err != nil {
		return "err " + err.Error()
	}
	return "ok"
}

// bomb starts args until a start fails or max run, keeps them in held, and says
// "started N EAGAIN".
func bomb(max int, args []string) string {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return "err " + err.Error()
	}
	defer null.Close()
	var ferr error
	for range max {
		p, err := os.StartProcess(args[0], args, &os.ProcAttr{Files: []*os.File{null, null, null}})
		if err != nil {
			ferr = err
			break
		}
		held = append(held, p)
	}
	return fmt.Sprintf("started %d %v", len(held), errors.Is(ferr, syscall.EAGAIN))
}

// release kills and reaps what a bomb started.
func release() {
	for _, p := range held {
		_ = p.Kill()
		_, _ = p.Wait()
	}
}
