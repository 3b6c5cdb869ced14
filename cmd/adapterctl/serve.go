package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/registry"
)

const serveHelp = `
Runs the control-plane daemon: the adapters found in each DIR (relative to the working
directory or absolute; without DIR,
the directories of $ADAPTERKIT_PATH) are kept supervised (opened on first use,
restarted when they fail) and clients of the same user are answered over the Unix
domain socket --socket (created owner-only; a stale socket is replaced, a live one
refused). Before serving, whatever a crashed predecessor left running is swept.

When the socket accepts connections one line is printed on stdout:
  adapterctl serve: serving N adapters from DIR, ... on SOCKET (pid P)
SIGTERM or SIGINT stops the daemon: the socket is removed, requests under way end
with an error, and every adapter is closed and its process tree verified gone; a last
line says whether that was proven. With --json both lines are JSON objects:
{"event":"ready","socket","dirs","adapters","pid"} and {"event":"stopped","verified"}.

An adapter opened by name follows new versions of its major version dropped into its
DIR (see 'adapterctl upgrade'). --pin NAME=SHA256 (also spelled --upgrade-digest)
pins NAME: every start of it (first open, restart, upgrade) runs only a file with one
of the digests given, the newest such version present; a file of NAME with another
digest is never executed. A version refused (it failed to start at the first open
while an older one starts, or as an upgrade; failed its handshake or catalog check;
or its digest was not pinned) is not started by any path until a new file replaces
it, 'adapterctl upgrade --retry NAME', or its pin is removed; the record is kept in
--state-dir, so after a restart the version that served before is served again, and
'adapterctl status' says why (a record that cannot be saved there is held in memory,
retried, and makes health degraded until it is saved). A state directory
or file not owned by the daemon's user, or writable by group or others, or a corrupt
one, keeps the daemon from starting (exit status 3).
` + sandboxHelp + policyHelp

// serveExitHelp documents serve's exit statuses, which end its help.
const serveExitHelp = `Exit status:
  0  stopped, every adapter's process tree verified gone
  2  usage error (bad flags or arguments; also a --socket path that exists and is not
     a socket, a certificate or key that does not load)
  3  the daemon could not serve: it could not start (the socket is in use by a running
     daemon or cannot be created, the state directory cannot be trusted, or daemons
     are unsupported on this OS)
  4  some adapter's process tree could not be proven gone at shutdown
  5  a DIR cannot be scanned
`

// serveEvent is the JSON shape of the lines serve prints with --json.
type serveEvent struct {
	Event    string   `json:"event"` // "ready" or "stopped"
	Socket   string   `json:"socket,omitempty"`
	Listen   string   `json:"listen,omitempty"`  // the TCP address served with --listen
	Metrics  string   `json:"metrics,omitempty"` // the address of the metrics endpoint (--metrics)
	Dirs     []string `json:"dirs,omitempty"`
	Adapters *int     `json:"adapters,omitempty"`
	PID      int      `json:"pid,omitempty"`
	Verified *bool    `json:"verified,omitempty"`
}

// lockedWriter serialises writes from the daemon's logger and its adapters' stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runServe is the serve command: it stops the daemon on SIGTERM or SIGINT.
func runServe(ctx context.Context, e *env, args []string) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serve(ctx, e, args)
}

// serve runs the daemon until ctx ends.
func serve(ctx context.Context, e *env, args []string) int {
	var o adapterOpts
	var socket, logLevel string
	var ro serveRemoteOpts
	f := newFlags(e, "serve", "[--socket SOCKET] [--listen HOST:PORT --tls-cert FILE --tls-key FILE --client-ca FILE --allow NAME=ROLE...] [flags] [DIR...]", serveHelp+serveRemoteHelp+serveServiceHelp)
	f.StringVar(&socket, "socket", "", "`SOCKET`: path of the Unix domain socket to create (default without --listen:\n$XDG_RUNTIME_DIR/adapterkit.sock, or adapterkit.sock in a 0700 per-user directory of $TMPDIR)")
	ro.register(f)
	var svc service
	svc.register(f)
	f.BoolVar(&o.json, "json", false, "print the ready and stopped lines, and errors, as JSON")
	f.Var(&o.env, "env", "`KEY=VALUE` added to every adapter's environment (repeatable; a KEY given again, or inherited, takes the last value)")
	f.Var(&o.envFiles, "env-file", "`FILE` of KEY=VALUE lines added to every adapter's environment before --env (repeatable;\nblank lines and lines starting with # are skipped; keeps secrets out of the command line)")
	f.BoolVar(&o.inheritEnv, "inherit-env", false, "pass adapterctl's whole environment to the adapters")
	f.BoolVar(&o.adapterStderr, "adapter-stderr", false, "copy the adapters' stderr to adapterctl's stderr (default: discarded)")
	var digests stringList
	f.Var(&digests, "pin", "`NAME=SHA256`: adapter NAME starts (first open, restart, upgrade) only from a file with one of the digests given for NAME (repeatable)")
	f.Var(&digests, "upgrade-digest", "`NAME=SHA256`: the older spelling of --pin")
	f.StringVar(&logLevel, "log", "warn", "log the daemon's events on stderr at `LEVEL`: trace, debug, info, warn (refused clients, certificate problems), error or off")
	o.sandbox.register(f)
	registerTrust(f, &o.allowGroupWritable)
	registerIsolation(f, &o.isolation)
	policyFile := f.String("policy", "", "`FILE` giving each adapter its own sandbox (see below)")
	stateFlag := f.String("state-dir", "", stateHelp)
	idle := f.Duration("socket-idle-timeout", time.Minute, "close a socket client that has no request under way and has sent nothing for this long;\n"+
		"when every one of the daemon's 256 client slots is taken, the socket client idle the longest is closed for a new one")
	dirs, isDone, status := f.parse(args)
	if isDone {
		return status
	}
	// Before anything reads the environment: what systemd passed is taken out of it.
	if err := svc.activate(&ro); err != nil {
		return fail(e, "serve", false, err, nil)
	}
	defer svc.close()
	if socket == "" && svc.unix != nil {
		socket = svc.unix.Addr().String()
	}
	level := hclog.LevelFromString(logLevel)
	environ, err := o.environ()
	if err != nil {
		return fail(e, "serve", false, err, nil)
	}
	sandbox, sandboxes, err := o.sandbox.serverPolicy(*policyFile)
	if err != nil {
		return fail(e, "serve", false, err, nil)
	}
	remote, err := ro.config(f)
	switch {
	case err != nil:
		return fail(e, "serve", false, err, nil)
	case level == hclog.NoLevel:
		return fail(e, "serve", false, usagef("--log %q is not one of trace, debug, info, warn, error, off", logLevel), nil)
	}
	if *idle <= 0 {
		return fail(e, "serve", false, usagef("--socket-idle-timeout %v: want a positive duration", *idle), nil)
	}
	if socket == "" && remote == nil {
		socket = defaultSocket()
		if err := prepareSocketDir(socket); err != nil {
			return fail(e, "serve", o.json, err, nil)
		}
	}
	allowed, err := upgradeDigests(digests)
	if err != nil {
		return fail(e, "serve", false, err, nil)
	}
	state, err := stateDir(*stateFlag, isSet(f, "state-dir"))
	if err != nil {
		return fail(e, "serve", false, err, nil)
	}
	if level != hclog.Off {
		// The adapters' own loggers (plugin.Logger) at the daemon's level; their
		// records are logged under the daemon's logger, named after each adapter.
		environ = proto.WithLogLevel(environ, level.String())
	}
	if len(dirs) == 0 {
		if dirs, _ = o.searchDirs(); len(dirs) == 0 {
			return fail(e, "serve", false, usagef("no DIR given and $%s is empty", pathEnv), nil)
		}
	} else {
		dirs, _ = absPaths(dirs) // the ready line shows them
	}
	found, err := discovery.Scan(ctx, o.scanOptions(), dirs...)
	if err != nil {
		return fail(e, "serve", o.json, err, nil)
	}
	stderr := &lockedWriter{w: e.stderr}
	cfg := controlplane.ServerConfig{Socket: socket, Dirs: dirs, AllowGroupWritable: o.allowGroupWritable, Version: buildVersion(), Env: environ, Sandbox: sandbox, Sandboxes: sandboxes,
		Upgrade: &registry.Upgrade{Allowed: allowed}, StateDir: state, IdleTimeout: *idle, Isolation: o.isolation,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "adapterctl", Output: stderr, Level: level, JSONFormat: o.json})}
	if o.adapterStderr {
		cfg.Stderr = stderr
	}
	var listening string
	if remote != nil {
		remote.OnListen = func(a net.Addr) { listening = a.String() }
		cfg.Remote = remote
	}
	if err := svc.configure(&cfg, cfg.Logger); err != nil {
		return fail(e, "serve", o.json, err, nil)
	}
	defer svc.reloadOnHUP(ctx, remote, cfg.Logger)()
	svc.watchStop(ctx)
	var readyErr error
	cfg.OnReady = func() {
		n := len(found.Adapters)
		svc.ready(n) // before the ready line: whoever reads it finds the probes ready
		if o.json {
			readyErr = json.NewEncoder(e.stdout).Encode(serveEvent{Event: "ready", Socket: socket, Listen: listening,
				Metrics: svc.listening, Dirs: dirs, Adapters: &n, PID: os.Getpid()})
		} else {
			var on []string
			if socket != "" {
				on = append(on, socket)
			}
			if listening != "" {
				on = append(on, "tls://"+listening)
			}
			metrics := ""
			if svc.listening != "" {
				metrics = "; metrics on http://" + svc.listening + "/metrics"
			}
			_, readyErr = fmt.Fprintf(e.stdout, "adapterctl serve: serving %s from %s on %s (pid %d)%s\n",
				count(n, "adapter", "adapters"), strings.Join(dirs, ", "), strings.Join(on, " and "), os.Getpid(), metrics)
		}
	}
	err = controlplane.Serve(ctx, cfg)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		err = nil // stopped by a signal before it served: nothing was opened
	}
	var se *controlplane.ShutdownError
	if err == nil || errors.As(err, &se) {
		verified := err == nil
		if o.json {
			_ = json.NewEncoder(e.stdout).Encode(serveEvent{Event: "stopped", Verified: &verified})
		} else if verified {
			fmt.Fprintln(e.stdout, "adapterctl serve: stopped; every adapter closed, process trees verified gone")
		} else {
			fmt.Fprintln(e.stdout, "adapterctl serve: stopped; NOT every adapter's process tree was verified gone")
		}
	}
	if err == nil && readyErr != nil {
		err = &outputError{readyErr}
	}
	if err != nil {
		return fail(e, "serve", o.json, err, nil)
	}
	return ExitOK
}

// version, when set at link time (-ldflags "-X main.version=V", as `make image`
// does), is the version the daemon reports, instead of the module's.
var version string

// buildVersion is adapterctl's version reported by the daemon's Version: the one set
// at link time, else the module version; "" (reported as "devel") for a build from a
// checkout.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return ""
}

// upgradeDigests parses the --pin (--upgrade-digest) values: NAME=SHA256, by name.
func upgradeDigests(vals []string) (map[string][]string, error) {
	out := make(map[string][]string)
	for _, v := range vals {
		name, sum, ok := strings.Cut(v, "=")
		if ref, err := discovery.ParseRef(name); !ok || err != nil || ref.Name != name {
			return nil, usagef("--pin %q is not NAME=SHA256 with an adapter name", v)
		}
		if len(sum) != 64 || strings.Trim(strings.ToLower(sum), "0123456789abcdef") != "" {
			return nil, usagef("--pin %q: the digest must be 64 hexadecimal digits", v)
		}
		out[name] = append(out[name], strings.ToLower(sum))
	}
	return out, nil
}
