package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/wire"
)

const inspectHelp = `
Starts the adapter, performs the initialize handshake (with --config as its
configuration), prints its catalog (services, versions, methods), the pid and the
mechanisms supervising its process tree, then closes it: stdin is closed, the adapter
may exit on its own, and its whole process tree is killed and verified gone.

` + adapterHelp + `
--json prints {"name","path","pid","supervision","dropped":[{"mechanism","reason"}],
"sandbox","grants":[{"access","what","from"}],"derived","protocol","services":[{"id",
"version","methods"}],"cleanup_verified"}; "dropped" lists the stronger supervision
mechanisms not in effect and why, the unenforced parts of a --sandbox-best-effort sandbox
included (absent when none); "sandbox" says what sandbox is in force and by which
mechanisms, and "grants" what it lets the adapter read, write, execute and reach, by
default or by which --allow-* flag (both absent without one); "derived" lists what the
sandbox grants beyond the policy because the adapter needs it to run ("exec P": its
interpreter or loader; "read D": an interpreter's installation prefix), found from the
executable and its PATH (absent when nothing was);
cleanup_verified false comes with exit status 4.
`

// dropped is one supervision mechanism not in effect, and why.
type dropped struct {
	Mechanism string `json:"mechanism"`
	Reason    string `json:"reason"`
}

// inspectOutput is the JSON shape of inspect.
type inspectOutput struct {
	Name            string         `json:"name"`
	Path            string         `json:"path"`
	Pid             int            `json:"pid"`
	Supervision     string         `json:"supervision"`
	Dropped         []dropped      `json:"dropped,omitempty"`
	Sandbox         string         `json:"sandbox,omitempty"`
	Grants          []sandboxGrant `json:"grants,omitempty"`
	Derived         []string       `json:"derived,omitempty"`
	Protocol        int            `json:"protocol"`
	Services        []wire.Service `json:"services"`
	CleanupVerified bool           `json:"cleanup_verified"`
}

func runInspect(ctx context.Context, e *env, args []string) int {
	var o adapterOpts
	f := newFlags(e, "inspect", "[flags] ADAPTER", inspectHelp)
	o.register(f)
	pos, done, status := f.parse(args)
	if done {
		return status
	}
	if len(pos) != 1 {
		return fail(e, "inspect", false, usagef("want exactly one ADAPTER, got %d arguments", len(pos)), nil)
	}
	t, cfg, err := o.prepare(ctx, e, pos[0])
	if err != nil {
		return fail(e, "inspect", o.json, err, nil)
	}
	a, err := lifecycle.Open(ctx, cfg)
	if err != nil {
		return fail(e, "inspect", o.json, err, nil)
	}
	cat := a.Catalog()
	out := inspectOutput{
		Name: t.Name, Path: t.Path, Pid: a.Pid(), Supervision: a.Supervision().Mechanism.String(),
		Protocol: cat.Protocol, Services: slices.Clone(cat.Services),
	}
	if out.Services == nil {
		out.Services = []wire.Service{}
	}
	out.Sandbox = a.Supervision().Sandbox
	if out.Sandbox != "" {
		out.Grants = sandboxGrants(cfg.Sandbox, t.Path)
	}
	out.Derived = a.Supervision().Derived
	out.Dropped = droppedOf(a.Supervision())
	cleanup := a.Close()
	out.CleanupVerified = cleanup == nil
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(e, "inspect", true, err, cleanup)
		}
	} else {
		printInspect(e, out)
	}
	if cleanup != nil {
		return fail(e, "inspect", o.json, nil, cleanup)
	}
	return ExitOK
}

// droppedOf lists each mechanism of sup not in effect, each gap of a best-effort
// sandbox included, in the order Supervision reports them.
func droppedOf(sup platform.Supervision) []dropped {
	var out []dropped
	for _, d := range sup.Dropped {
		out = append(out, dropped{Mechanism: d.Mechanism.String(), Reason: d.Reason})
	}
	return out
}

func printInspect(e *env, out inspectOutput) {
	w := e.stdout
	fmt.Fprintf(w, "adapter      %s\n", out.Name)
	fmt.Fprintf(w, "path         %s\n", out.Path)
	fmt.Fprintf(w, "pid          %d\n", out.Pid)
	fmt.Fprintf(w, "supervision  %s\n", out.Supervision)
	for _, d := range out.Dropped {
		fmt.Fprintf(w, "  %s dropped: %s\n", d.Mechanism, d.Reason)
	}
	if out.Sandbox != "" {
		fmt.Fprintf(w, "sandbox      %s\n", out.Sandbox)
		printGrants(w, out.Grants)
	}
	for _, d := range out.Derived {
		fmt.Fprintf(w, "  derived: %s\n", d)
	}
	fmt.Fprintf(w, "protocol     %d\n", out.Protocol)
	fmt.Fprintf(w, "services     %d\n", len(out.Services))
	for _, s := range out.Services {
		fmt.Fprintf(w, "  %s v%d (%s)\n", s.ID, s.Version, count(len(s.Methods), "method", "methods"))
		for _, m := range s.Methods {
			fmt.Fprintf(w, "    %s\n", m)
		}
	}
	if out.CleanupVerified {
		fmt.Fprintln(w, "closed       process tree verified gone")
	} else {
		fmt.Fprintln(w, "closed       process tree NOT verified gone")
	}
}
