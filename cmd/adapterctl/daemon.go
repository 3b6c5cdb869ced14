package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/internal/cpconst"
	"github.com/adapterkit/adapterkit/limits"
)

const daemonClientHelp = `
SOCKET is the Unix domain socket of a running 'adapterctl serve' (by default
$XDG_RUNTIME_DIR/adapterkit.sock, as serve's). The process listening there must be
this user's or root's (systemd's, for a socket it passed); any other is refused
(exit 3: "owned by uid N (NAME)"), since it would read the requests and could forge
the answers. The daemon answers only clients of its own user: run the client as the
daemon's user (e.g. sudo -u adapterd); another user is refused (exit 3: "this daemon
answers only clients of its own user"). Text the daemon sends (adapter names, errors, log tails) is printed with
terminal control characters escaped. The answer is
printed on stdout: aligned text, or with --json one JSON object (the control-plane
result as the daemon sent it). A daemon that cannot be reached, that closes the
connection, or that does not answer within %v exits 3.

Control-plane errors map to exit statuses as follows: not_found 5; invalid_params 2
(the request was refused: e.g. a malformed ADAPTER reference), but 1 when the adapter
itself answered invalid; not_implemented 1 (the adapter does not advertise the
method: never started, as for a local call); transport_error 1 when the adapter
answered with an error or the call's deadline passed, 3 when the adapter could not
be started, broke the protocol or exited (its stage or violation is named); 4 when
the adapter's process tree could not be verified gone; frame_too_large 2;
permission_denied (a remote client whose role may not call the method),
unknown_method, internal (e.g. the daemon is shutting down) and codes unknown to
this adapterctl 3.
`

// answerSlack is how long a client command waits for the daemon beyond the bound of
// the request itself (a call's deadline, a Discover's duration).
const answerSlack = 5 * time.Second

// requestWait bounds the wait for an answer to Ping, Version, Capabilities (which
// opens every adapter within the call deadline) and Status.
const requestWait = limits.CallDeadline + answerSlack

// daemonError: the daemon could not be reached, its connection ended before it
// answered, or it did not answer in time.
type daemonError struct {
	socket string
	what   string
	err    error
}

func (e *daemonError) Error() string {
	cause := e.err.Error()
	if errors.Is(e.err, controlplane.ErrOutcomeUncertain) {
		// what says it: the cause is the connection's own error.
		cause = strings.TrimPrefix(cause, controlplane.ErrOutcomeUncertain.Error()+": ")
	}
	return fmt.Sprintf("daemon at %s: %s: %s", e.socket, e.what, cause)
}

func (e *daemonError) Unwrap() error { return e.err }

// whatUncertain is a daemonError's what when the connection ended with the request
// under way (controlplane.ErrOutcomeUncertain), whatUncertainCall that of a call.
const (
	whatUncertain     = "the daemon's connection ended mid-request: the outcome is uncertain (the request may have been carried out)"
	whatUncertainCall = "the daemon's connection ended mid-call: the outcome is uncertain (the call may have run: the adapter may have acted)"
)

// uncertain reports whether the request's connection ended with it under way.
func (e *daemonError) uncertain() bool { return e.what == whatUncertain || e.what == whatUncertainCall }

// whatUntrusted is a daemonError's what when the process listening at the socket is
// run by a user this client does not trust (trying again would not change that).
const whatUntrusted = "refused: not a daemon of a trusted user"

// whatRefused is a daemonError's what when a remote daemon refused the client at
// connect: the reason is only in the daemon's log, which 'adapterctl serve' writes to
// its stderr (refusals are warnings, shown at its default --log warn).
const whatRefused = "refused this client's certificate; why is in the daemon's log, on the stderr of its " +
	"'adapterctl serve' (a \"remote client refused\" warning)"

// daemonOpts are the flags of the client commands.
type daemonOpts struct {
	socket string
	remote remoteOpts
	json   bool
}

func (o *daemonOpts) register(f *flags) {
	f.StringVar(&o.socket, "socket", "", "`SOCKET` of the running daemon (default $XDG_RUNTIME_DIR/adapterkit.sock, or\nadapterkit.sock in a 0700 per-user directory of $TMPDIR without it)")
	o.remote.register(f)
	f.BoolVar(&o.json, "json", false, "print machine-readable JSON (errors: one JSON object on stderr)")
}

// where names the daemon in messages and output.
func (o *daemonOpts) where() string { return describeTarget(o.socket, o.remote) }

// clientCommand parses the common flags of ping, version, capabilities, status and
// discover; register adds a command's own flags. done is set with the exit status
// when nothing is left to do.
func clientCommand(e *env, name string, o *daemonOpts, register func(*flags), args []string) (done bool, status int) {
	_, done, status = clientCommandArgs(e, name, "", o, register, args)
	return done, status
}

// clientCommandArgs is clientCommand for a command that takes at most one positional
// argument, named in its usage line by arg ("" for none); it returns it.
func clientCommandArgs(e *env, name, arg string, o *daemonOpts, register func(*flags), args []string) (pos []string, done bool, status int) {
	help := commandSummary(name) + "\n"
	if name == "discover" {
		help += `
Each event is printed as it arrives, one line each ("found", "changed" or "removed",
then the adapter's name, version and path; with --json one DiscoverEvent object per
line: {"change","adapter":{"name","version","path","dir","size","mod_time"}}), until
the daemon ends the stream after --timeout. An interrupt (Ctrl-C) ends it early, with
exit status 0.
`
	}
	if name == "top" {
		help += topHelp
	}
	if name == "wait" {
		help += waitHelp
	}
	if name == "upgrade" {
		help += upgradeHelp
	}
	usageLine := "(--socket SOCKET | --remote HOST:PORT --tls-ca FILE --tls-cert FILE --tls-key FILE) [flags]"
	if arg != "" {
		usageLine += " [" + arg + "]"
	}
	f := newFlags(e, name, usageLine, help+fmt.Sprintf(daemonClientHelp, requestWait)+remoteClientHelp)
	o.register(f)
	if register != nil {
		register(f)
	}
	pos, done, status = f.parse(args)
	if done {
		return nil, true, status
	}
	remote, err := o.remote.resolve(f, isSet(f, "socket"))
	switch {
	case arg == "" && len(pos) > 0:
		return nil, true, fail(e, name, false, usagef("no arguments expected, got %q", pos), nil)
	case len(pos) > 1:
		return nil, true, fail(e, name, false, usagef("at most one %s expected, got %q", arg, pos), nil)
	case err != nil:
		return nil, true, fail(e, name, false, err, nil)
	case o.socket == "" && !remote:
		o.socket = defaultSocket()
	}
	return pos, false, ExitOK
}

// commandSummary returns the summary of a registered command, capitalised as a
// sentence.
func commandSummary(name string) string {
	for _, c := range commands {
		if c.name == name {
			return strings.ToUpper(c.summary[:1]) + c.summary[1:] + "."
		}
	}
	return ""
}

// withDaemon connects to the daemon (o's socket, or its remote address with mutual
// TLS), runs fn with ctx bounded by wait, and closes the connection. Errors of the
// connection are *daemonError, a refusal is the daemon's *controlplane.Error, an
// interrupt is ctx's error.
func withDaemon(ctx context.Context, o *daemonOpts, wait time.Duration, fn func(context.Context, *controlplane.Client) error) error {
	socket := o.where()
	var (
		c   *controlplane.Client
		err error
	)
	if o.remote.addr != "" {
		c, err = o.remote.dial(ctx)
	} else {
		c, err = o.dialSocket(ctx)
	}
	if err != nil {
		var ue *usageError
		switch {
		case errors.As(err, &ue):
			return err
		case errors.Is(err, controlplane.ErrUntrustedDaemon):
			return &daemonError{socket: socket, what: whatUntrusted, err: err}
		case ctx.Err() != nil:
			return ctx.Err()
		case refusedByDaemon(err):
			return &daemonError{socket: socket, what: whatRefused, err: err}
		}
		return &daemonError{socket: socket, what: "cannot connect", err: err}
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err = fn(rctx, c)
	var cpe *controlplane.Error
	switch {
	case err == nil, errors.As(err, &cpe):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	case rctx.Err() != nil:
		return &daemonError{socket: socket, what: fmt.Sprintf("no answer within %v", wait), err: err}
	case refusedByDaemon(err):
		// TLS 1.3: the daemon checks the client's certificate after the client's
		// handshake is done, so its refusal arrives as the first answer.
		return &daemonError{socket: socket, what: whatRefused, err: err}
	case errors.Is(err, controlplane.ErrOutcomeUncertain):
		return &daemonError{socket: socket, what: whatUncertain, err: err}
	}
	return &daemonError{socket: socket, what: "connection ended", err: err}
}

// printJSON writes v indented on w.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// pingOutput is the JSON shape of ping.
type pingOutput struct {
	Socket      string    `json:"socket,omitempty"`
	Remote      string    `json:"remote,omitempty"` // HOST:PORT, for a daemon reached with --remote
	ServerTime  time.Time `json:"server_time"`
	RoundTripNS int64     `json:"round_trip_ns"`
	SkewNS      int64     `json:"skew_ns"`
}

func runPing(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	if done, status := clientCommand(e, "ping", &o, nil, args); done {
		return status
	}
	var r *controlplane.PingResult
	err := withDaemon(ctx, &o, requestWait, func(ctx context.Context, c *controlplane.Client) (err error) {
		r, err = c.Ping(ctx)
		return err
	})
	if err != nil {
		return fail(e, "ping", o.json, err, nil)
	}
	out := pingOutput{Socket: o.socket, Remote: o.remote.addr, ServerTime: r.ServerTime, RoundTripNS: r.RoundTrip.Nanoseconds(), SkewNS: r.Skew.Nanoseconds()}
	if o.json {
		return finish(e, "ping", printJSON(e.stdout, out))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "daemon\t%s\n", o.where())
	fmt.Fprintf(tw, "server time\t%s\n", out.ServerTime.Format(time.RFC3339Nano))
	fmt.Fprintf(tw, "round trip\t%v\n", r.RoundTrip)
	sign := "+"
	if r.Skew < 0 {
		sign = "-"
	}
	fmt.Fprintf(tw, "clock skew\t%s%v (positive: the daemon's clock is ahead)\n", sign, r.Skew.Abs())
	return finish(e, "ping", tw.Flush())
}

// finish ends a command whose answer was printed: err is a failed write.
func finish(e *env, cmd string, err error) int {
	if err != nil {
		return fail(e, cmd, false, err, nil)
	}
	return ExitOK
}

func runVersion(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	if done, status := clientCommand(e, "version", &o, nil, args); done {
		return status
	}
	var r *controlplane.VersionResult
	err := withDaemon(ctx, &o, requestWait, func(ctx context.Context, c *controlplane.Client) (err error) {
		r, err = c.Version(ctx)
		return err
	})
	if err != nil {
		return fail(e, "version", o.json, err, nil)
	}
	if o.json {
		return finish(e, "version", printJSON(e.stdout, r))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "daemon\t%s\n", r.Daemon)
	fmt.Fprintf(tw, "protocol\t%d (this adapterctl: %d)\n", r.Protocol, cpconst.ProtocolVersion)
	fmt.Fprintf(tw, "adapter protocol\t%d\n", r.AdapterProtocol)
	fmt.Fprintf(tw, "go\t%s\n", r.Go)
	return finish(e, "version", tw.Flush())
}

func runCapabilities(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	if done, status := clientCommand(e, "capabilities", &o, nil, args); done {
		return status
	}
	var r *controlplane.CapabilitiesResult
	err := withDaemon(ctx, &o, requestWait, func(ctx context.Context, c *controlplane.Client) (err error) {
		r, err = c.Capabilities(ctx)
		return err
	})
	if err != nil {
		return fail(e, "capabilities", o.json, err, nil)
	}
	if o.json {
		return finish(e, "capabilities", printJSON(e.stdout, r))
	}
	// One line per adapter, its name and version padded to align the paths, then its
	// catalog (or why it could not be opened) indented below it.
	nameW, verW := len("NAME"), len("VERSION")
	for _, a := range r.Adapters {
		nameW, verW = max(nameW, len(a.Name)), max(verW, len(a.Version))
	}
	w := &errWriter{w: e.stdout}
	w.printf("%-*s  %-*s  %s\n", nameW, "NAME", verW, "VERSION", "PATH")
	for _, a := range r.Adapters {
		w.printf("%-*s  %-*s  %s\n", nameW, a.Name, verW, a.Version, a.Path)
		if a.Error != nil {
			w.printf("  not opened: %s: %s\n", a.Error.Code, a.Error.Message)
		}
		for _, s := range a.Services {
			w.printf("  %s v%d (%s)\n", s.ID, s.Version, count(len(s.Methods), "method", "methods"))
			for _, m := range s.Methods {
				w.printf("    %s\n", m)
			}
		}
	}
	return finish(e, "capabilities", w.err)
}

func runStatus(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	if done, status := clientCommand(e, "status", &o, nil, args); done {
		return status
	}
	var r *controlplane.StatusResult
	err := withDaemon(ctx, &o, requestWait, func(ctx context.Context, c *controlplane.Client) (err error) {
		r, err = c.Status(ctx)
		return err
	})
	if err != nil {
		return fail(e, "status", o.json, err, nil)
	}
	if o.json {
		return finish(e, "status", printJSON(e.stdout, r))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "health\t%s\n", r.Health)
	if r.RefusedNotSaved != "" {
		fmt.Fprintf(tw, "state\tNOT SAVED (%d failed saves): %s\n", r.RefusedSaveFailures, r.RefusedNotSaved)
	}
	fmt.Fprintf(tw, "pid\t%d\n", r.PID)
	fmt.Fprintf(tw, "started\t%s\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(tw, "dirs\t%s\n", strings.Join(r.Dirs, ", "))
	fmt.Fprintf(tw, "clients\t%d (refused %d, dropped %d)\n", r.Clients, r.RefusedClients, r.DroppedClients)
	fmt.Fprintf(tw, "calls\t%d (%d in flight)\n", r.Calls, r.InFlight)
	fmt.Fprintf(tw, "restarts\t%d\n", r.Restarts)
	fmt.Fprintf(tw, "exits\t%d (adapters that ended on their own)\n", r.Exits)
	fmt.Fprintf(tw, "unverified\t%d (process trees not proven gone)\n", r.UnverifiedCleanups)
	fmt.Fprintf(tw, "reserved\t%s\n", orNone(strings.Join(r.Reserved, ", ")))
	sweep := fmt.Sprintf("%d swept, %d failed", len(r.Sweep.Swept), len(r.Sweep.Failed))
	if r.Sweep.Error != "" {
		sweep += " (" + r.Sweep.Error + ")"
	}
	fmt.Fprintf(tw, "sweep\t%s\n", sweep)
	if rs := r.Remote; rs != nil {
		fmt.Fprintf(tw, "remote\ttls://%s (refused %d, dropped %d, certificate reloads %d, certificate valid until %s)\n",
			rs.Listen, rs.RefusedClients, rs.DroppedClients, rs.Reloads, rs.CertNotAfter.Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "adapters\t%d open\n", len(r.Adapters))
	if len(r.Refused) > 0 {
		fmt.Fprintf(tw, "refused\t%d adapter file(s), not started until replaced or retried:\n", len(r.Refused))
	}
	if err := tw.Flush(); err != nil {
		return finish(e, "status", err)
	}
	if err := printRefused(e.stdout, r.Refused); err != nil {
		return finish(e, "status", err)
	}
	if len(r.Adapters) == 0 {
		return ExitOK
	}
	if err := printAdapters(e.stdout, r.Adapters); err != nil {
		return finish(e, "status", err)
	}
	if err := printSandboxes(e.stdout, r.Adapters); err != nil {
		return finish(e, "status", err)
	}
	return finish(e, "status", printFigures(e.stdout, r.Adapters))
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errWriter keeps the first failed write.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) printf(format string, a ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, a...)
	}
}

// outputError is a failed write of the command's own output.
type outputError struct{ err error }

func (e *outputError) Error() string { return "writing the output: " + e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

func runDiscover(ctx context.Context, e *env, args []string) int {
	var o daemonOpts
	var timeout time.Duration
	register := func(f *flags) {
		f.DurationVar(&timeout, "timeout", 5*time.Second, "how long the stream lasts (at most "+cpconst.MaxDiscoverTimeout.String()+")")
	}
	if done, status := clientCommand(e, "discover", &o, register, args); done {
		return status
	}
	if err := checkTimeout("--timeout", timeout, cpconst.MaxDiscoverTimeout); err != nil {
		return fail(e, "discover", false, err, nil)
	}
	if timeout < time.Millisecond {
		return fail(e, "discover", false, usagef("--timeout must be at least 1ms, not %v", timeout), nil)
	}
	enc := json.NewEncoder(e.stdout)
	var werr error
	onEvent := func(ev controlplane.DiscoverEvent) error {
		if o.json {
			werr = enc.Encode(ev)
		} else {
			_, werr = fmt.Fprintf(e.stdout, "%-7s  %s  %s  %s\n", ev.Change, ev.Adapter.Name, ev.Adapter.Version, ev.Adapter.Path)
		}
		if werr != nil {
			werr = &outputError{werr}
		}
		return werr
	}
	err := withDaemon(ctx, &o, timeout+answerSlack, func(ctx context.Context, c *controlplane.Client) error {
		return c.Discover(ctx, timeout, onEvent)
	})
	switch {
	case werr != nil:
		return fail(e, "discover", false, werr, nil)
	case err != nil && ctx.Err() != nil:
		return ExitOK // interrupted: the stream ends early, as documented
	case err != nil:
		return fail(e, "discover", o.json, err, nil)
	}
	return ExitOK
}

// callDaemon is "call --socket" (or --remote): the call is sent to the daemon, which
// resolves ref among its adapters. The flags that configure a locally started
// adapter are refused.
func callDaemon(ctx context.Context, e *env, f *flags, asJSON bool, o *daemonOpts, timeout time.Duration, ref, method string, params []byte) int {
	var local []string
	f.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "dir", "config", "env", "inherit-env", "adapter-stderr", "isolation":
			local = append(local, "--"+fl.Name)
		}
	})
	via := "--socket"
	if o.remote.addr != "" {
		via = "--remote"
	}
	switch {
	case o.socket == "" && o.remote.addr == "":
		return fail(e, "call", false, usagef("--socket is empty"), nil)
	case len(local) > 0:
		return fail(e, "call", false, usagef("%s cannot be used with %s (the daemon starts and configures its adapters)", strings.Join(local, ", "), via), nil)
	}
	p := controlplane.SendParams{Adapter: ref, Method: method, Params: params, TimeoutMS: max(timeout.Milliseconds(), 1)}
	var r *controlplane.SendResult
	err := withDaemon(ctx, o, timeout+answerSlack, func(ctx context.Context, c *controlplane.Client) (err error) {
		r, err = c.Send(ctx, p)
		return err
	})
	if de := (*daemonError)(nil); errors.As(err, &de) && de.what == whatUncertain {
		de.what = whatUncertainCall
	}
	if err != nil {
		return fail(e, "call", asJSON, err, nil)
	}
	if _, err := fmt.Fprintf(e.stdout, "%s\n", r.Value); err != nil {
		return fail(e, "call", asJSON, err, nil)
	}
	return ExitOK
}

// isSet reports whether the flag name was given on the command line.
func isSet(f *flags, name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
