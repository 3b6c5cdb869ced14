package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/adapterkit/adapterkit/discovery"
)

const listHelp = `
Scans each DIR (not its subdirectories; a relative DIR is taken from the working
directory, and the absolute path used is shown on stderr) for adapters named NAME_vVERSION
(NAME_vVERSION.exe on Windows) and prints what was found: name, version and path,
newest version first. Every other entry is listed with the reason it was not taken
(bad name, not executable, world-writable, group-writable, owned by another user,
duplicate, ...) and the detail. Without DIR,
the directories of $ADAPTERKIT_PATH are scanned. Nothing is started.

--json prints {"adapters":[{"name","version","path","dir"}],
"rejected":[{"path","reason","detail"}]}.
`

// listedAdapter and listedRejection are the JSON shapes of list.
type listedAdapter struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	Dir     string `json:"dir"`
}

type listedRejection struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

type listOutput struct {
	Adapters []listedAdapter   `json:"adapters"`
	Rejected []listedRejection `json:"rejected"`
}

func runList(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "list", "[--json] [DIR...]", listHelp)
	asJSON := f.Bool("json", false, "print machine-readable JSON (errors: one JSON object on stderr)")
	var o adapterOpts
	registerTrust(f, &o.allowGroupWritable)
	dirs, done, status := f.parse(args)
	if done {
		return status
	}
	var notes []string
	if len(dirs) == 0 {
		dirs, notes = o.searchDirs()
		if len(dirs) == 0 {
			return fail(e, "list", false, usagef("no DIR given and $%s is empty", pathEnv), nil)
		}
	} else {
		dirs, notes = absPaths(dirs)
	}
	printNotes(e, "list", *asJSON, notes)
	res, err := discovery.Scan(ctx, o.scanOptions(), dirs...)
	if err != nil {
		return fail(e, "list", *asJSON, err, nil)
	}
	out := listOutput{Adapters: []listedAdapter{}, Rejected: []listedRejection{}}
	for _, a := range res.Adapters {
		out.Adapters = append(out.Adapters, listedAdapter{Name: a.Name, Version: a.Version.String(), Path: a.Path, Dir: a.Dir})
	}
	for _, r := range res.Rejected {
		detail := r.Detail
		if detail == "" && r.Err != nil {
			detail = r.Err.Error()
		}
		out.Rejected = append(out.Rejected, listedRejection{Path: r.Path, Reason: r.Reason.String(), Detail: detail})
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(e, "list", false, err, nil)
		}
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tVERSION\tPATH\n")
	for _, a := range out.Adapters {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.Name, a.Version, a.Path)
	}
	if err := tw.Flush(); err != nil {
		return fail(e, "list", false, err, nil)
	}
	if len(out.Rejected) > 0 {
		fmt.Fprintf(e.stdout, "\nNot taken (%d):\n", len(out.Rejected))
		tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, r := range out.Rejected {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Path, r.Reason, r.Detail)
		}
		if err := tw.Flush(); err != nil {
			return fail(e, "list", false, err, nil)
		}
	}
	return ExitOK
}
