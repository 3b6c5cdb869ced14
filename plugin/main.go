package plugin

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
)

// Main serves the adapter over the process's stdin and stdout and exits the process; it
// is meant to be the whole of func main, and is the only function of the package that
// exits or prints.
//
// Its first action protects stdout (R6): the original stdout becomes a private
// descriptor used only for frames, and os.Stdout and file descriptor 1 (the standard
// output handle on Windows) are redirected to stderr, so that stray prints of the
// adapter or its libraries never reach the protocol stream. It then serves with
// [Adapter.Serve] and exits with status 0 when the host disconnected cleanly (R49), or
// with status 1 after writing the cause to stderr: an invalid adapter definition (the
// catalog is checked before anything is read), a host violation, or a failed output.
// When a.Logger is nil, diagnostics go to [Logger] (JSON records on stderr).
func Main(a *Adapter) {
	tuneGC()
	out, err := protectStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		os.Exit(1)
	}
	ad := *a
	if ad.Logger == nil {
		ad.Logger = Logger()
	}
	if err := ad.Serve(context.Background(), os.Stdin, out); err != nil {
		fmt.Fprintln(os.Stderr, "adapter:", err)
		os.Exit(1)
	}
	os.Exit(0)
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
