package main

import (
	"context"
	"fmt"
	"io"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
)

const callHelp = `
Starts the adapter, performs the handshake, calls METHOD once with PARAMS_JSON (one
JSON object; default {}; "-" reads it from stdin) and prints the result (JSON) on
stdout. The adapter is then closed and its process tree verified gone.

On failure the typed error goes to stderr: the code (one of invalid, closed, aborted,
denied, unavailable, busy, failed, deadline), the message, and whether the outcome is
uncertain (the request was sent and no reply came: the adapter may have acted) or the
call never started (nothing was sent, e.g. a method the adapter does not advertise).
When the connection broke, the protocol violation is named ("The adapter process
exited", "The adapter output ended or violated the protocol", ...). With --json the
error is one JSON object on stderr: {"command","error","exit","call":{"method","id",
"code","raw_code","message","uncertain","never_started","cause"},"violation","detail",
"cleanup"}; the result on stdout is the same raw JSON either way.

--timeout bounds the call (not the start); when it passes, a cancel is sent and the
call fails with deadline, outcome uncertain.

--isolation no-pid-namespace starts the adapter outside a PID namespace (still in a
cgroup where the host may create one), which a debugger that executes the adapter needs
('dlv exec' as the adapter's file: docs/debugging.md).

With --socket SOCKET the call is sent to the running daemon there ('adapterctl
serve') instead of starting the adapter: ADAPTER is passed as given (NAME,
NAME@CONSTRAINT or the absolute path of an adapter the daemon discovered), and
--timeout bounds the start of the adapter (when the daemon has not opened it yet) and
the call. --dir, --config, --env, --inherit-env, --adapter-stderr and --isolation are
refused with --socket (the daemon starts and configures its adapters). The output is
the same; an error also names the control-plane code ("control":{"code","message",
"adapter","stage"} with --json). See 'adapterctl help ping' for how control-plane
errors map to exit statuses. --remote HOST:PORT with --tls-ca, --tls-cert and --tls-key (or
$ADAPTERKIT_REMOTE and the like) sends the call, the same way, to a daemon serving on
TCP with mutual TLS ('adapterctl help ping').

` + adapterHelp

// maxStdinParams caps params read from stdin: a request larger than a frame could not
// be sent anyway (R58).
const maxStdinParams = limits.MaxFrameSize

func runCall(ctx context.Context, e *env, args []string) int {
	var o adapterOpts
	f := newFlags(e, "call", "[flags] ADAPTER METHOD [PARAMS_JSON|-]", callHelp)
	o.register(f)
	registerIsolation(f, &o.isolation)
	timeout := f.Duration("timeout", limits.CallDeadline, "deadline of the call (at most the protocol's 30s)")
	var d daemonOpts
	f.StringVar(&d.socket, "socket", "", "send the call to the daemon at `SOCKET` instead of starting the adapter")
	d.remote.register(f)
	pos, done, status := f.parse(args)
	if done {
		return status
	}
	remote, err := d.remote.resolve(f, isSet(f, "socket"))
	if err != nil {
		return fail(e, "call", false, err, nil)
	}
	if len(pos) < 2 || len(pos) > 3 {
		return fail(e, "call", false, usagef("want ADAPTER METHOD [PARAMS_JSON], got %d arguments", len(pos)), nil)
	}
	if err := checkTimeout("--timeout", *timeout, limits.CallDeadline); err != nil {
		return fail(e, "call", false, err, nil)
	}
	method := pos[1]
	params, err := readParams(e.stdin, pos[2:])
	if err != nil {
		return fail(e, "call", false, err, nil)
	}
	if isSet(f, "socket") || remote {
		return callDaemon(ctx, e, f, o.json, &d, *timeout, pos[0], method, params)
	}
	_, cfg, err := o.prepare(ctx, e, pos[0])
	if err != nil {
		return fail(e, "call", o.json, err, nil)
	}
	a, err := lifecycle.Open(ctx, cfg)
	if err != nil {
		return fail(e, "call", o.json, err, nil)
	}
	callCtx, cancel := context.WithTimeout(ctx, *timeout)
	result, callErr := a.Call(callCtx, method, params)
	cancel()
	cleanup := a.Close()
	if callErr != nil {
		return fail(e, "call", o.json, callErr, cleanup)
	}
	if _, err := fmt.Fprintf(e.stdout, "%s\n", result); err != nil {
		return fail(e, "call", o.json, err, cleanup)
	}
	if cleanup != nil {
		return fail(e, "call", o.json, nil, cleanup)
	}
	return ExitOK
}

// readParams returns the PARAMS_JSON argument (or stdin for "-"), validated as one
// JSON object; nil means {}.
func readParams(stdin io.Reader, arg []string) ([]byte, error) {
	if len(arg) == 0 {
		return nil, nil
	}
	p := []byte(arg[0])
	if arg[0] == "-" {
		var err error
		p, err = io.ReadAll(io.LimitReader(stdin, maxStdinParams+1))
		if err != nil {
			return nil, usagef("reading PARAMS_JSON from stdin: %v", err)
		}
		if len(p) > maxStdinParams {
			return nil, usagef("PARAMS_JSON from stdin exceeds %d bytes", maxStdinParams)
		}
	}
	if err := proto.ValidateParams(p); err != nil || len(p) == 0 {
		if err == nil {
			err = fmt.Errorf("empty")
		}
		return nil, usagef("PARAMS_JSON is not one JSON object: %v", err)
	}
	return p, nil
}
