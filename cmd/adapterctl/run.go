package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// Exit statuses of adapterctl. When several apply, the highest-priority one wins:
// ExitUnverified, then ExitUncertain, then ExitBroken, then ExitFailed.
const (
	// ExitOK: the command succeeded.
	ExitOK = 0
	// ExitFailed: the adapter answered the call with an error, or a check failed.
	ExitFailed = 1
	// ExitUsage: bad flags or arguments, malformed JSON.
	ExitUsage = 2
	// ExitBroken: the adapter or the daemon could not serve the command: the adapter
	// could not be started, failed its handshake, violated the protocol or exited; the
	// daemon could not be reached or started, was not trusted, closed the connection,
	// did not answer, or refused the request (permission_denied, internal, ...).
	ExitBroken = 3
	// ExitUnverified: the adapter's process tree could not be verified gone (R63).
	ExitUnverified = 4
	// ExitNotFound: the adapter was not found, or a directory could not be scanned.
	ExitNotFound = 5
	// ExitUncertain: the connection to the daemon ended with the request under way
	// (controlplane.ErrOutcomeUncertain): the daemon may or may not have carried it
	// out, a call's adapter may have acted. Repeat it only if that is harmless.
	ExitUncertain = 6
)

// exitBrokenHelp is what exit status 3 means, the one text every help uses for it.
const exitBrokenHelp = `the adapter or the daemon could not serve the command: the adapter
     could not be started, failed its handshake, violated the protocol or exited; the
     daemon could not be reached or started, was not trusted, closed the connection,
     did not answer, or refused the request (permission_denied, internal, unknown_method)`

// exitCodesHelp documents the exit statuses in the help of the commands that start
// adapters or ask a daemon; serve and certs have their own (serveExitHelp, certsExitHelp).
const exitCodesHelp = `Exit status:
  0  success
  1  the adapter answered with an error (call), or a check failed (check)
  2  usage error (bad flags or arguments, malformed JSON)
  3  ` + exitBrokenHelp + `
  4  the adapter's process tree could not be verified gone (takes precedence over 1 and 3)
  5  adapter not found, or a directory could not be scanned
  6  the daemon's connection ended with the request under way: its outcome is
     uncertain (the call may have run); repeat it only if that is harmless
`

// adapterHelp documents the ADAPTER argument.
const adapterHelp = `ADAPTER is the path of an executable, or NAME[@CONSTRAINT] (e.g. "echo",
"thermometer@~> 1.0", "echo@>= 1.2, < 2") looked up in the directories given with --dir
(repeatable) or, without --dir, in $ADAPTERKIT_PATH (directories separated by the OS
path-list separator). The newest matching NAME_vVERSION file is taken. Relative paths
are taken from the working directory; the absolute path used is shown on stderr.
The adapter gets an empty environment unless --inherit-env or --env is given.
` + sandboxHelp

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// env is what a command runs with: its streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

var commands []command

// printsDaemonText are the commands that print what a daemon or an adapter sent:
// their output goes through an escapeWriter.
var printsDaemonText = map[string]bool{"ping": true, "version": true, "capabilities": true, "discover": true,
	"status": true, "top": true, "call": true, "inspect": true}

func init() {
	commands = []command{
		{"list", "list the adapters found in directories, and why files were not taken", runList},
		{"inspect", "start an adapter, print its catalog and supervision, close it verified", runInspect},
		{"call", "start an adapter, call one method, print the result, close it verified", runCall},
		{"check", "check an adapter against the protocol (conformance checks by rule)", runCheck},
		{"serve", "run the daemon: supervise the adapters of directories, answer on a Unix socket", runServe},
		{"wait", "wait until the daemon at --socket answers (after starting serve in the background)", runWait},
		{"ping", "ask the daemon at --socket to answer; round trip and clock skew", runPing},
		{"version", "the daemon's version and the protocols it speaks", runVersion},
		{"capabilities", "every adapter the daemon discovered, with its catalog", runCapabilities},
		{"discover", "stream the adapters the daemon finds, and their changes, for --timeout", runDiscover},
		{"status", "the daemon's health, counters and open adapters", runStatus},
		{"upgrade", "make the daemon look for new adapter versions now and let them take over", runUpgrade},
		{"top", "the daemon's adapters, refreshed every second: CPU, memory, calls, errors, latency", runTop},
		{"contract", "from a Go contract's packages: the JSON Schema of its methods (contract schema), types for the other SDKs (contract gen)", runContract},
		{"certs", "create a CA, a daemon and client certificates to try serve --listen (mutual TLS)", runCerts},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `adapterctl: see, call and check adapters (Adapter process protocol v1).

Usage:
  adapterctl COMMAND [flags] [arguments]
  adapterctl help [COMMAND]
  adapterctl COMMAND --help
  adapterctl serve --socket SOCKET [DIR...]     (a daemon keeping adapters supervised)
  adapterctl COMMAND --socket SOCKET ...        (call, ping, version, capabilities,
                                                 discover, status: ask that daemon)
  adapterctl COMMAND --remote HOST:PORT --tls-ca FILE --tls-cert FILE --tls-key FILE ...
                                                (the same, to 'serve --listen' over TLS)

Commands:
`)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\n%s\n%s", adapterHelp, exitCodesHelp)
}

// run is the whole program: it parses args, runs one command and returns the exit
// status. An interrupt (Ctrl-C) cancels the command, which still ends its adapter
// verified; serve also stops on SIGTERM.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(e, rest)
	}
	for _, c := range commands {
		if c.name == name {
			if printsDaemonText[name] {
				e.stdout, e.stderr = &escapeWriter{w: stdout}, &escapeWriter{w: stderr}
			}
			return c.run(ctx, e, rest)
		}
	}
	fmt.Fprintf(stderr, "adapterctl: unknown command %q\n\n", name)
	usage(stderr)
	return ExitUsage
}

// runHelp prints the overview or one command's help on stdout.
func runHelp(e *env, args []string) int {
	switch len(args) {
	case 0:
		usage(e.stdout)
		return ExitOK
	case 1:
		for _, c := range commands {
			if c.name == args[0] {
				// Each command prints its help on stdout for --help and returns ExitOK.
				return c.run(context.Background(), e, []string{"--help"})
			}
		}
		fmt.Fprintf(e.stderr, "adapterctl help: unknown command %q\n", args[0])
		return ExitUsage
	}
	fmt.Fprintln(e.stderr, "adapterctl help: at most one COMMAND")
	return ExitUsage
}

// usageError is a problem with the command line.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// flags is a command's flag set and where asked-for help goes.
type flags struct {
	*flag.FlagSet
	stdout io.Writer
}

// newFlags returns a flag set for a command whose help is the synopsis and description
// followed by the flags and the exit statuses.
func newFlags(e *env, name, synopsis, description string) *flags {
	fs := flag.NewFlagSet("adapterctl "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: adapterctl %s %s\n\n%s\nFlags:\n", name, synopsis, strings.TrimLeft(description, "\n"))
		fs.PrintDefaults()
		fmt.Fprintf(w, "\n%s", exitHelpOf(name))
	}
	return &flags{FlagSet: fs, stdout: e.stdout}
}

// exitHelpOf returns the exit statuses of command name's help.
func exitHelpOf(name string) string {
	switch name {
	case "serve":
		return serveExitHelp
	case "certs":
		return certsExitHelp
	case "contract schema", "contract gen":
		return contractExitHelp
	}
	return exitCodesHelp
}

// parse parses flags anywhere among the arguments (Go's flag package alone stops at the
// first positional argument); everything after "--" is positional. It returns the
// positional arguments, or done with an exit status when help was asked (printed on
// stdout) or the flags were bad (the message and the usage went to stderr).
func (f *flags) parse(args []string) (pos []string, done bool, status int) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			f.SetOutput(f.stdout)
			f.Usage()
			return nil, true, ExitOK
		}
	}
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) { // -help=true and the like
				return nil, true, ExitOK
			}
			return nil, true, ExitUsage
		}
		args = f.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return append(pos, tail...), false, ExitOK
}
