// Command badadapter is a deliberately faulty adapter for the tests of adapterctl. It
// speaks the protocol by hand (package wire) and misbehaves according to the
// NAME of its file name NAME_vVERSION, so one build serves every fault:
//
//   - garbage: after answering initialize, prints a line of text to stdout (R6, R53).
//   - noexit: behaves, but keeps running after stdin EOF (R49).
//   - crash: exits with status 3 on the first request after initialize (R52).
//   - leaky: behaves, but on stdin EOF starts a copy of itself that keeps running after
//     the adapter exits (R64).
//   - sleeper: the copy started by leaky; it sleeps and never speaks.
//   - fragile: ignores what it cannot parse (bad JSON, a wrong envelope type, a
//     zero-length frame) and carries on, where it should end the connection (A28).
//   - panicky: panics on what it cannot parse, instead of exiting cleanly (A28).
//   - daemonizer: on bad.adapter.echo with params {"token": T}, double-forks a daemon the
//     way a Unix daemon leaves its parent: a copy of itself (the middle) starts another
//     in a session of its own (setsid) and exits, so the daemon, "sleeper T" on its
//     command line, has neither the adapter as its parent nor its process group; the
//     result is {"daemon": PID} (the pid as the adapter sees it) once the middle has
//     exited.
//   - prober: on bad.adapter.echo with params {"read": [PATH...], "list": [PATH...],
//     "inotify": true, "bomb": [MAX, PROGRAM, ARG...], "escape": [T, PROCS]}, tries each
//     and returns what happened, one key each, "ok" or "err " and the error: "read:PATH"
//     (read the file), "list:PATH" (list the directory), "inotify" (inotify_init1),
//     "bomb" ("started N EAGAIN": started PROGRAM until a start failed or MAX ran, and
//     whether the failure was EAGAIN; it keeps them until stdin ends, then kills them),
//     "escape" and "daemon" (started "sleeper T" in a session of its own, its pid in
//     "daemon", then wrote that pid into the file PROCS, a cgroup's cgroup.procs:
//     "escape" is how that write went).
//
// Service bad.adapter version 1 has one method, bad.adapter.echo, which returns its
// params. Requests before initialize and a second initialize are answered invalid,
// unknown methods unavailable, requests with unknown envelope fields invalid.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

const catalog = `{"protocol":1,"services":[{"id":"bad.adapter","version":1,"methods":["bad.adapter.echo"]}]}`

func main() {
	mode, _, _ := strings.Cut(filepath.Base(os.Args[0]), "_v")
	if mode == "sleeper" || (len(os.Args) > 1 && os.Args[1] == "sleeper") {
		time.Sleep(time.Hour)
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "middle" {
		os.Exit(middle(os.Args[2]))
	}
	serve(mode)
	switch mode {
	case "noexit":
		time.Sleep(time.Hour)
	case "prober":
		release()
	case "leaky":
		self, err := os.Executable()
		if err == nil {
			cmd := exec.Command(self, "sleeper")
			if cmd.Start() == nil {
				_ = cmd.Process.Release()
			}
		}
	}
}

func send(payload []byte) {
	frame, err := proto.AppendFrame(nil, payload, 0, false)
	if err == nil {
		_, err = os.Stdout.Write(frame)
	}
	if err != nil {
		os.Exit(1)
	}
}

// serve answers requests until stdin ends.
func serve(mode string) {
	r := proto.NewReader(os.Stdin, 0)
	initialized := false
	for {
		p, err := r.ReadFrame()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				return
			case mode == "fragile" && errors.Is(err, proto.ErrFrameEmpty):
				continue
			case mode == "panicky":
				panic(err)
			}
			os.Exit(1)
		}
		m, err := proto.DecodeHostMessage(p)
		var ee *proto.EnvelopeError
		switch {
		case errors.As(err, &ee) && ee.Type == proto.TypeRequest && ee.ID != 0:
			send(proto.AppendError(nil, ee.ID, wire.CodeInvalid, "invalid envelope"))
			continue
		case err != nil && mode == "fragile":
			continue
		case err != nil && mode == "panicky":
			panic(err)
		case err != nil:
			os.Exit(1)
		case m.Type == proto.TypeCancel:
			continue
		}
		switch {
		case m.Method == proto.MethodInitialize && !initialized:
			initialized = true
			send(proto.AppendResult(nil, m.ID, []byte(catalog)))
			if mode == "garbage" {
				_, _ = os.Stdout.WriteString("hello from the adapter\n")
			}
		case m.Method == proto.MethodInitialize, !initialized:
			send(proto.AppendError(nil, m.ID, wire.CodeInvalid, "not now"))
		case mode == "crash":
			os.Exit(3)
		case m.Method == "bad.adapter.echo" && mode == "daemonizer":
			res, err := daemonize(m.Params)
			if err != nil {
				send(proto.AppendError(nil, m.ID, wire.CodeFailed, err.Error()))
				continue
			}
			send(proto.AppendResult(nil, m.ID, res))
		case m.Method == "bad.adapter.echo" && mode == "prober":
			res, err := probe(m.Params)
			if err != nil {
				send(proto.AppendError(nil, m.ID, wire.CodeInvalid, err.Error()))
				continue
			}
			send(proto.AppendResult(nil, m.ID, res))
		case m.Method == "bad.adapter.echo":
			send(proto.AppendResult(nil, m.ID, m.Params))
		default:
			send(proto.AppendError(nil, m.ID, wire.CodeUnavailable, proto.MessageUnknownMethod))
		}
	}
}

// daemonize starts the middle process, which starts the daemon and exits, and returns
// the daemon's pid as the middle printed it.
func daemonize(params []byte) ([]byte, error) {
	var p struct{ Token string }
	if err := json.Unmarshal(params, &p); err != nil || p.Token == "" {
		return nil, errors.New(`params must be {"token": T}`)
	}
	cmd := exec.Command(os.Args[0], "middle", p.Token)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the middle process: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("the middle process said %q", out)
	}
	return json.Marshal(map[string]int{"daemon": pid})
}

// middle starts the daemon in a session of its own, prints its pid and exits without
// waiting for it.
func middle(token string) int {
	cmd := exec.Command(os.Args[0], "sleeper", token)
	ownSession(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the daemon:", err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	return 0
}
