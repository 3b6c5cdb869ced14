// Command host is a small host program that embeds the registry: it discovers the
// adapters in one or more directories, opens them by NAME@CONSTRAINT, binds a typed
// client, calls them, shows their typed errors, reads a console's output as a polled
// stream, and closes everything with verified cleanup.
//
//	host -dir DIR [-dir DIR2 | -dir DIR1,DIR2] [-v]
//
// `make demo` builds the example adapters into build/adapters and runs it there. It
// prints one line per step and exits with status 0 only if every step went as expected
// and every adapter's process tree was proven gone; the console adapter and the echo
// adapters of the language SDKs (pyecho, tsecho, rsecho: each built where its
// toolchain is) are optional, called when present and skipped when absent. Logs go to
// stderr at Warn level, Debug with -v.
//
// Adapters get an environment holding only the host's PATH, so that a script adapter's
// "#!/usr/bin/env node" (tsecho's, as `make adapters` writes it) finds its interpreter;
// nothing else of the host's environment is passed on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/registry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// dirList is a flag that may be repeated and takes comma-separated lists.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, ",") }

func (d *dirList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		*d = append(*d, abs)
	}
	return nil
}

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dirs dirList
	fs.Var(&dirs, "dir", "adapter directory (repeatable, or a comma-separated list)")
	verbose := fs.Bool("v", false, "log at Debug level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(dirs) == 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: host -dir DIR [-dir DIR...] [-v]")
		return 2
	}
	level := hclog.Warn
	if *verbose {
		level = hclog.Debug
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "host", Level: level, Output: stderr})

	reg := registry.New(&registry.Config{
		Dirs:   dirs,
		Env:    []string{"PATH=" + os.Getenv("PATH")},
		Logger: log,
	})
	d := &demo{ctx: ctx, out: stdout, reg: reg}
	d.run()

	if err := reg.Close(context.Background()); err != nil {
		var ce *registry.CloseError
		if errors.As(err, &ce) {
			for path, cause := range ce.Unverified {
				d.say("NOT verified gone: %s: %v", path, cause)
			}
		} else {
			d.say("closing: %v", err)
		}
		d.failed = true
	} else {
		d.say("all adapters closed, process trees verified gone")
	}
	if d.failed {
		return 1
	}
	return 0
}

// demo runs the steps against one registry and remembers whether any went wrong.
type demo struct {
	ctx    context.Context
	out    io.Writer
	reg    *registry.Registry
	scan   *discovery.Result
	failed bool
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, format+"\n", args...)
}

// fail reports a step that went wrong.
func (d *demo) fail(step string, err error) {
	d.say("%s: FAILED: %v", step, err)
	d.failed = true
}

func (d *demo) run() {
	if !d.discover() {
		return
	}
	d.thermometer()
	d.echo()
	if d.present("console") {
		d.console()
	} else {
		d.say("console: not installed, skipped")
	}
	for _, e := range sdkEchoes {
		if d.present(e.name) {
			d.sdkEcho(e.name, e.language)
		} else {
			d.say("%s: not installed, skipped", e.name)
		}
	}
}

// discover scans the directories and prints what was found and what was not taken.
func (d *demo) discover() bool {
	res, err := d.reg.Discover(d.ctx)
	if err != nil {
		d.fail("discovery", err)
		return false
	}
	d.scan = res
	d.say("discovery: %d adapter(s), %d file(s) rejected", len(res.Adapters), len(res.Rejected))
	for _, a := range res.Adapters {
		d.say("  found    %-12s %-8s %s", a.Name, a.Version, a.Path)
	}
	for _, r := range res.Rejected {
		reason := r.Reason.String()
		if r.Detail != "" {
			reason += " (" + r.Detail + ")"
		}
		d.say("  rejected %s: %s", r.Path, reason)
	}
	return true
}

// present reports whether discovery found an adapter named name.
func (d *demo) present(name string) bool { return len(d.scan.Lookup(name)) > 0 }

// open opens an adapter by reference and returns its handle and a label such as
// "thermometer 1.0.0" for the lines it prints.
func (d *demo) open(ref string) (*registry.Handle, string, error) {
	h, err := d.reg.Open(d.ctx, ref, nil)
	if err != nil {
		return nil, ref, err
	}
	label := h.Name()
	if _, v, err := discovery.ParseFileName(filepath.Base(h.Path()), ""); err == nil {
		label += " " + v.String()
	}
	return h, label, nil
}
