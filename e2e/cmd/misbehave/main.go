// Command misbehave is an adapter built with the plugin SDK that misbehaves on purpose,
// in the ways a host's process supervision must survive. The e2e tests open it through
// package lifecycle and check from /proc, not through the code under test, that nothing
// it started is left running.
//
// Its initialize configuration is an object:
//
//	{"mode": "grandchild", "pidfile": "/abs/path", "delay_ms": 1000}
//
// pidfile (required) is the record every process of the tree appends to itself, one line
// per event, "<kind> <role> <pid> <start>": kind "proc" when a process starts (its role
// says which: adapter, sleeper, middle, daemon, chain5..chain1, holder), "exit" just before
// the adapter exits on its own, "call" when a misbehave.proc.hang call has begun. pid is the
// host's pid of the process (read from /proc/self, which names the host's pid also when the
// adapter is process 1 of its own PID namespace) and start its start time in clock ticks
// (field 22 of /proc/<pid>/stat), so that a reused pid is never mistaken for it.
//
// Modes (each spawns its processes while initialize is answered, and waits until every
// one has recorded itself, so the record is complete when the host's Open returns):
//
//   - normal: nothing is spawned; the adapter exits on stdin EOF like any SDK adapter.
//   - grandchild: a sleeping child in the adapter's process group.
//   - doublefork: a child that starts a grandchild calling setsid (it leaves the adapter's
//     session and process group) and exits, so the grandchild is re-parented.
//   - chain: a fork-and-exit chain five deep; only the last process keeps running.
//   - ignoreterm: ignores SIGTERM and SIGHUP, as does its sleeping child, and does not exit
//     on stdin EOF: only SIGKILL ends it.
//   - slowexit: on stdin EOF waits delay_ms, records "exit" and exits.
//   - stdoutclosed: closes its stdout right after the initialize reply and keeps running,
//     also after stdin EOF.
//   - exitholding: a child inherits the adapter's stdin and stdout (holding the pipes);
//     misbehave.proc.exit then ends the adapter alone.
//
// Children are this same executable run with the hidden first argument "__child"; no
// shell is involved. Every child ignores SIGTERM and SIGHUP.
//
// Methods of service misbehave.proc (version 1):
//
//   - misbehave.proc.ping: returns {"pid": host pid}.
//   - misbehave.proc.pids: returns the processes recorded in pidfile, [{"role","pid","start"}].
//   - misbehave.proc.sleep {"ms": N}: waits N ms (0..30000), or until cancelled (aborted).
//   - misbehave.proc.hang: records "call", then waits until cancelled or disconnected.
//   - misbehave.proc.await {"file": F}: records "call", then returns {"file": F} once the
//     file F exists (so a test knows the call is in flight, and decides when it ends).
//   - misbehave.proc.exit {"code": N}: records "exit" and exits with status N at once.
//   - misbehave.proc.garbage: writes bytes that are not a frame to stdout (a violation).
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// config is the initialize configuration.
type config struct {
	Mode    string `json:"mode"`
	PidFile string `json:"pidfile"`
	DelayMS int    `json:"delay_ms"`
}

// Modes.
const (
	modeNormal       = "normal"
	modeGrandchild   = "grandchild"
	modeDoublefork   = "doublefork"
	modeChain        = "chain"
	modeIgnoreTerm   = "ignoreterm"
	modeSlowExit     = "slowexit"
	modeStdoutClosed = "stdoutclosed"
	modeExitHolding  = "exitholding"
)

// chainDepth is the number of processes of the chain mode's fork-and-exit chain.
const chainDepth = 5

// adapter is the state of one misbehave adapter process.
type adapter struct {
	cfg config
	out *hookWriter
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		runChild(os.Args[2:])
		return
	}
	ad := &adapter{out: &hookWriter{f: os.Stdout}}
	svc := plugin.NewService("misbehave.proc", 1)
	plugin.Handle(svc, "misbehave.proc.ping", ad.ping)
	plugin.Handle(svc, "misbehave.proc.pids", ad.pids)
	plugin.Handle(svc, "misbehave.proc.sleep", ad.sleep)
	plugin.Handle(svc, "misbehave.proc.hang", ad.hang)
	plugin.Handle(svc, "misbehave.proc.await", ad.await)
	plugin.Handle(svc, "misbehave.proc.exit", ad.exit)
	plugin.Handle(svc, "misbehave.proc.garbage", ad.garbage)
	p := &plugin.Adapter{
		Services:      []*plugin.Service{svc},
		Configuration: &ad.cfg,
		OnInitialize:  ad.initialize,
	}
	// The writer is not os.Stdout itself, so Serve leaves descriptor 1 alone: a child
	// may inherit it (exitholding) and the adapter may close it (stdoutclosed).
	err := p.Serve(context.Background(), os.Stdin, ad.out)
	ad.afterEOF(err)
}

// initialize records the adapter and spawns what its mode asks for.
func (ad *adapter) initialize(ctx context.Context) error {
	if ad.cfg.PidFile == "" {
		return plugin.Errorf(wire.CodeInvalid, "configuration needs pidfile")
	}
	if ad.cfg.DelayMS < 0 || time.Duration(ad.cfg.DelayMS)*time.Millisecond > limits.CallDeadline {
		return plugin.Errorf(wire.CodeInvalid, "delay_ms must be from 0 to %d", limits.CallDeadline.Milliseconds())
	}
	var spawn []childSpec
	switch ad.cfg.Mode {
	case modeNormal, modeSlowExit:
	case modeGrandchild, modeIgnoreTerm:
		spawn = []childSpec{{kind: kindSleep, role: "sleeper"}}
	case modeDoublefork:
		spawn = []childSpec{{kind: kindFork, role: "middle"}}
	case modeChain:
		spawn = []childSpec{{kind: kindChain, role: "chain", depth: chainDepth}}
	case modeStdoutClosed:
		ad.out.after = func(f *os.File) { _ = f.Close() }
	case modeExitHolding:
		spawn = []childSpec{{kind: kindSleep, role: "holder", holdPipes: true}}
	default:
		return plugin.Errorf(wire.CodeInvalid, "unknown mode %q", ad.cfg.Mode)
	}
	if ad.cfg.Mode == modeIgnoreTerm {
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	}
	if err := record(ad.cfg.PidFile, "proc", "adapter"); err != nil {
		return plugin.Errorf(wire.CodeFailed, "recording the adapter: %v", err)
	}
	for _, c := range spawn {
		if err := startChild(ctx, ad.cfg.PidFile, c); err != nil {
			return plugin.Errorf(wire.CodeFailed, "spawning %s: %v", c.role, err)
		}
	}
	return nil
}

// afterEOF runs when Serve has returned: stdin ended (the host disconnected), or the
// connection failed.
func (ad *adapter) afterEOF(serveErr error) {
	switch ad.cfg.Mode {
	case modeIgnoreTerm, modeStdoutClosed:
		// Keep running whatever happens: only SIGKILL ends this.
		for {
			time.Sleep(time.Hour)
		}
	case modeSlowExit:
		time.Sleep(time.Duration(ad.cfg.DelayMS) * time.Millisecond)
	}
	if ad.cfg.PidFile != "" {
		_ = record(ad.cfg.PidFile, "exit", "adapter")
	}
	if serveErr != nil && !errors.Is(serveErr, plugin.ErrShutdownIncomplete) {
		os.Exit(1)
	}
	os.Exit(0)
}

type pidReply struct {
	Pid int `json:"pid"`
}

func (ad *adapter) ping(context.Context, struct{}) (pidReply, error) {
	return pidReply{Pid: hostPid()}, nil
}

func (ad *adapter) pids(context.Context, struct{}) ([]procRecord, error) {
	recs, err := readRecords(ad.cfg.PidFile)
	if err != nil {
		return nil, plugin.Errorf(wire.CodeFailed, "reading %s: %v", ad.cfg.PidFile, err)
	}
	return recs, nil
}

type sleepParams struct {
	MS int `json:"ms"`
}

func (ad *adapter) sleep(ctx context.Context, p sleepParams) (sleepParams, error) {
	if p.MS < 0 || time.Duration(p.MS)*time.Millisecond > limits.CallDeadline {
		return sleepParams{}, plugin.Errorf(wire.CodeInvalid, "ms must be from 0 to %d", limits.CallDeadline.Milliseconds())
	}
	t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return p, nil
	case <-ctx.Done():
		return sleepParams{}, plugin.Errorf(wire.CodeAborted, "sleep cancelled")
	}
}

func (ad *adapter) hang(ctx context.Context, _ struct{}) (struct{}, error) {
	if err := record(ad.cfg.PidFile, "call", "adapter"); err != nil {
		return struct{}{}, plugin.Errorf(wire.CodeFailed, "recording the call: %v", err)
	}
	<-ctx.Done()
	return struct{}{}, plugin.Errorf(wire.CodeAborted, "hang ended: %v", context.Cause(ctx))
}

type awaitParams struct {
	File string `json:"file"`
}

func (ad *adapter) await(ctx context.Context, p awaitParams) (awaitParams, error) {
	if err := record(ad.cfg.PidFile, "call", "adapter"); err != nil {
		return awaitParams{}, plugin.Errorf(wire.CodeFailed, "recording the call: %v", err)
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(p.File); err == nil {
			return p, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return awaitParams{}, plugin.Errorf(wire.CodeAborted, "await ended: %v", context.Cause(ctx))
		}
	}
}

type exitParams struct {
	Code int `json:"code"`
}

func (ad *adapter) exit(_ context.Context, p exitParams) (struct{}, error) {
	_ = record(ad.cfg.PidFile, "exit", "adapter")
	os.Exit(p.Code)
	return struct{}{}, nil
}

// garbage writes a line of text where a frame is expected: its first four bytes read as
// a length far beyond the frame limit (R5, R53).
func (ad *adapter) garbage(context.Context, struct{}) (struct{}, error) {
	if _, err := ad.out.raw([]byte("this is not a frame\n")); err != nil {
		return struct{}{}, plugin.Errorf(wire.CodeFailed, "writing garbage: %v", err)
	}
	return struct{}{}, nil
}
