package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// Exit statuses of [Main].
const (
	// exitHostFault: the adapter definition is invalid, the host violated the
	// protocol, or the output failed.
	exitHostFault = 1
	// exitNotStartedByHost: stdin is a terminal, or the input began with text: a person
	// ran the adapter by hand. Main then explains what the program is and how to try it.
	exitNotStartedByHost = 2
)

// Main serves the adapter over the process's stdin and stdout and exits the process; it
// is meant to be the whole of func main, and is the only function of the package that
// exits or prints.
//
// Its first action protects stdout: the original stdout becomes a private
// descriptor used only for frames, and os.Stdout and file descriptor 1 (the standard
// output handle on Windows) are redirected to stderr, so that stray prints of the
// adapter or its libraries never reach the protocol stream. It then serves with
// [Adapter.Serve] and exits with status 0 when the host disconnected cleanly, or
// with status 1 after writing the cause to stderr, once: an invalid
// adapter definition (the catalog is checked before anything is read), a host
// violation, or a failed output. When a.Logger is nil, diagnostics go to [Logger] (JSON
// records on stderr).
//
// An adapter is started by a host, never by a person; Main recognises when it is run
// by hand — stdin is a terminal, or the first bytes read are text rather than a frame
// header (`echo hi | ./adapter`) — and then says on stderr that this program is an
// adapter, with the adapterctl commands that try it, and exits with status 2.
func Main(a *Adapter) {
	tuneGC()
	ad := *a
	ad.reportsCause = true
	if isTerminal(os.Stdin) {
		fmt.Fprint(os.Stderr, byHand(&ad, "stdin is a terminal"))
		os.Exit(exitNotStartedByHost)
	}
	out, err := protectStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		os.Exit(exitHostFault)
	}
	if ad.Logger == nil {
		ad.Logger = Logger()
	}
	err = ad.Serve(context.Background(), os.Stdin, out)
	switch {
	case err == nil:
		os.Exit(0)
	case errors.Is(err, errTextInput):
		fmt.Fprint(os.Stderr, byHand(&ad, "the input is text, not protocol frames ("+textDetail(err)+")"))
		os.Exit(exitNotStartedByHost)
	}
	fmt.Fprintln(os.Stderr, "adapter:", err)
	os.Exit(exitHostFault)
}

// byHand explains, for a person who ran the adapter themselves, what it is and how to
// try it.
func byHand(a *Adapter, what string) string {
	path, err := os.Executable()
	if err != nil {
		path = os.Args[0]
	}
	method := "METHOD"
	cat, catErr := a.Catalog()
	if catErr == nil && len(cat.Services) > 0 && len(cat.Services[0].Methods) > 0 {
		method = cat.Services[0].Methods[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "adapter: %s.\n", what)
	if catErr != nil {
		fmt.Fprintf(&b, "adapter: note that a host would refuse it as it is: %v\n", catErr)
	}
	b.WriteString("This program is an adapter: a host program starts it and exchanges length-prefixed JSON frames\n")
	b.WriteString("with it over stdin and stdout (the Adapter process protocol, docs/protocol.md); it does not\n")
	b.WriteString("read commands typed by a person. Try it with adapterctl, installed from a clone of the\n")
	b.WriteString("adapterkit repository (cd adapterkit && go install ./cmd/adapterctl):\n")
	fmt.Fprintf(&b, "  adapterctl inspect %s\n", shellQuote(path))
	fmt.Fprintf(&b, "  adapterctl call %s %s '{}'\n", shellQuote(path), method)
	fmt.Fprintf(&b, "  adapterctl check %s\n", shellQuote(path))
	return b.String()
}

// textDetail quotes the text that began the input, from the frame error in err.
func textDetail(err error) string {
	var fe *proto.FrameError
	if errors.As(err, &fe) {
		if t, ok := fe.Text(); ok {
			return fmt.Sprintf("it began with %q", t)
		}
	}
	return "it did not begin with a frame header"
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path
// characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:@,=", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isTerminal reports whether f is a terminal (a console on Windows).
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	return terminalFD(f.Fd())
}

// mainGCPercent is the garbage collector's target heap growth in adapters run by Main,
// half the Go default.
const mainGCPercent = 50

// tuneGC makes an adapter's heap grow half as far between collections as Go's default
// (GOGC=100), unless the environment chose (GOGC or GOMEMLIMIT): adapters are small,
// long-lived processes, often many per host, where footprint matters more than the
// little CPU a more frequent collection costs. Measured with examples/echo over a
// workload of small calls, 32 concurrent callers and 1 MiB echoes: peak RSS 9.8 MiB at
// the default, 7.1 MiB at 50.
func tuneGC() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(mainGCPercent)
	}
}
